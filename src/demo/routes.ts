import type { ChannelHealth } from '../messaging/health.js';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import type { AppContext, AppRouter } from '../http/context.js';
import { encode, sendEncoded } from '../http/encodings.js';
import { CSS, ICO, JS, registerAssets, SVG, type Asset } from '../http/static-assets.js';
import { EMOJI_ALPHABET } from '../registrations/emoji-alphabet.js';
import { EMOJI_IMAGES_PATH, emojiImageName } from './emoji.js';
import { registerConsoleRoutes } from './console/routes.js';
import { renderLoginPage } from './page.js';
import { pageLanguage, type PageLanguage } from './texts.js';

/**
 * The login page at `/` (DEMO_PAGE, on by default): a person sees a login happen end to end.
 * Its script (src/demo/browser/, with the typed client and the QR code library bundled in by
 * esbuild during `npm run build`) and styles are served from dist/demo/, never from a CDN, in
 * the brotli and gzip forms the build made; the code's emoji pictures (emoji.ts) from the
 * @twemoji/svg package, as they are (1–5 KB each). The OpenID interaction page is the same page
 * (src/oidc/interaction.ts), so the assets and the icon are served whether or not `/` is on.
 */
const built = (file: string): string => fileURLToPath(new URL(`../../demo/${file}`, import.meta.url));
const require = createRequire(import.meta.url);

/** One picture for each emoji the server draws, and no other file of the package. */
const emojiAssets = (): Record<string, Asset> =>
  Object.fromEntries(EMOJI_ALPHABET.map((e) => [emojiImageName(e), { file: require.resolve(`@twemoji/svg/${emojiImageName(e)}`), type: SVG }]));

/** The page's language for this request (`Accept-Language`, else the chat's). */
export const requestLanguage = (ctx: Pick<AppContext, 'acceptsLanguages'>, fallback: PageLanguage): PageLanguage =>
  pageLanguage(ctx.acceptsLanguages(), fallback);

export function registerLoginPageAssets(router: AppRouter): void {
  registerAssets(router, '/demo', {
    'app.js': { file: built('app.js'), type: JS, precompressed: true },
    'style.css': { file: built('style.css'), type: CSS, precompressed: true },
    'favicon.svg': { file: built('favicon.svg'), type: SVG, precompressed: true },
  });
  // browsers ask for /favicon.ico on their own (the API reference too): never a 404
  registerAssets(router, '', { 'favicon.ico': { file: built('favicon.ico'), type: ICO } });
  registerAssets(router, EMOJI_IMAGES_PATH, emojiAssets());
}

/**
 * The pages' routes under this configuration, for the web role to hand to createApp (`pages`):
 * the assets for `/` and for the OpenID interaction page, `/` when DEMO_PAGE is on, and the
 * operator console at `/admin` (console/routes.ts), always.
 */
export function loginPageRoutes(config: Config, health?: Pick<ChannelHealth, 'writeTo'>): (router: AppRouter) => void {
  return (router) => {
    if (config.demo.enabled || config.oidc) registerLoginPageAssets(router);
    if (config.demo.enabled) registerDemoRoutes(router, config, health);
    registerConsoleRoutes(router, config, health);
  };
}

/**
 * The login page shows the number to write to: a healthy one of the channels' numbers
 * (messaging/health.ts), else WHATSAPP_NUMBER. Each page is rendered and compressed once per
 * language and number (a handful of numbers at most).
 */
export function registerDemoRoutes(router: AppRouter, config: Config, health?: Pick<ChannelHealth, 'writeTo'>): void {
  const pages = new Map<string, ReturnType<typeof encode>>();
  const page = (lang: PageLanguage, whatsappNumber: string | undefined) => {
    const key = `${lang}\0${whatsappNumber ?? ''}`;
    let encoded = pages.get(key);
    if (encoded === undefined) {
      encoded = encode(renderLoginPage({ brand: { name: config.replies.appName }, flow: { kind: 'client', whatsappNumber }, lang, whatsappNumber }));
      pages.set(key, encoded);
    }
    return encoded;
  };
  router.get('/', async (ctx) => {
    const writeTo = health ? await health.writeTo() : null;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.vary('Accept-Language');
    sendEncoded(ctx, page(requestLanguage(ctx, config.replies.language), writeTo?.number ?? config.demo.whatsappNumber));
  });
}
