import { escapeHtml } from './html.js';

/**
 * The code's emoji as pictures of our own, so they are in colour wherever the page is opened
 * (a Linux desktop without a colour emoji font draws some of them, 🐱🐭🐮🐵, as black outlines):
 * each emoji the server draws (src/registrations/emoji-alphabet.ts) has a Twemoji SVG
 * (@twemoji/svg, graphics CC-BY 4.0), served from this origin as `/demo/emoji/<code point>.svg`.
 * The emoji stays text: it sits in its picture, transparent, so it is what is read aloud,
 * selected and copied. Anything else (a client's own emoji) is left as text.
 * Rendered by the server (page.ts) and by the page's script (browser/view.ts) alike; the
 * picture is a style attribute, which both pages' Content-Security-Policy allows (inline styles).
 */
export const EMOJI_IMAGES_PATH = '/demo/emoji';

/** `1f431.svg` (one code point each: the alphabet has no sequences). */
export const emojiImageName = (emoji: string): string => `${emoji.codePointAt(0)!.toString(16)}.svg`;

export function emojiHtml(text: string, pictured: ReadonlySet<string>): string {
  return Array.from(text, (c) =>
    pictured.has(c) ? `<span class="e" style="background-image:url(${EMOJI_IMAGES_PATH}/${emojiImageName(c)})"><span>${c}</span></span>` : escapeHtml(c),
  ).join('');
}
