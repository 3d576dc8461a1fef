/**
 * Whose sign-in the login page is, and its colours: the service's own look at `/`, an OpenID
 * client's (`client_name`, `logo_uri`, `brand_color`, `brand_background_color` from its
 * registration) on the interaction page. Every text colour is picked here for a contrast of at
 * least 4.5:1 on its background (WCAG AA), whatever colours a client registers.
 */
export interface Brand {
  name: string;
  /** shown beside the name; the page's Content-Security-Policy allows images from its origin */
  logoUri?: string;
  /** `#rrggbb`: the header rule and the main button */
  colour?: string;
  /** `#rrggbb`: the page background */
  background?: string;
}

/** The colours a client may register (validated at start, see src/config.ts). */
export const BRAND_COLOUR_PATTERN = /^#[0-9a-fA-F]{6}$/;

const DEFAULT = { fg: '#111111', bg: '#ffffff', accent: '#075e54', bad: '#a4000f', good: '#05603a', muted: '#3d3d3d' };
const AA = 4.5;

function luminance(hex: string): number {
  const channel = (i: number): number => {
    const v = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}

/** WCAG contrast ratio of two `#rrggbb` colours. */
export function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

/** Black or white, whichever reads better on `bg` (one of them always reaches 4.58:1). */
const textOn = (bg: string): string => (contrast('#000000', bg) >= contrast('#ffffff', bg) ? '#000000' : '#ffffff');

/** `preferred` when it reads on `bg`, else black or white. */
const readable = (preferred: string, bg: string): string => (contrast(preferred, bg) >= AA ? preferred : textOn(bg));

/** The page's colour variables (style.css reads them): empty for the service's own look. */
export function brandCss(brand: Brand): string {
  if (!brand.colour && !brand.background) return '';
  const bg = brand.background ?? DEFAULT.bg;
  const accent = brand.colour ?? DEFAULT.accent;
  const vars = {
    '--bg': bg,
    '--fg': readable(DEFAULT.fg, bg),
    '--muted': readable(DEFAULT.muted, bg),
    '--bad': readable(DEFAULT.bad, bg),
    '--good': readable(DEFAULT.good, bg),
    '--accent': accent,
    '--on-accent': textOn(accent),
    // the outlined button's text is the page's text colour; its border is the brand's
    '--link': readable(accent, bg),
  };
  return `:root{${Object.entries(vars)
    .map(([k, v]) => `${k}:${v}`)
    .join(';')}}`;
}
