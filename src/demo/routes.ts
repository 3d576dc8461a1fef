import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import type { AppRouter } from '../http/context.js';
import { encode, sendEncoded } from '../http/encodings.js';
import { CSS, ICO, JS, registerAssets, SVG } from '../http/static-assets.js';
import { renderLoginPage } from './page.js';

/**
 * The login page at `/` (DEMO_PAGE, on by default): a person sees a login happen end to end.
 * Its script (src/demo/browser/, with the typed client and the QR code library bundled in by
 * esbuild during `npm run build`) and styles are served from dist/demo/, never from a CDN, in
 * the brotli and gzip forms the build made. The OpenID interaction page is the same page
 * (src/oidc/interaction.ts), so the assets and the icon are served whether or not `/` is on.
 */
const built = (file: string): string => fileURLToPath(new URL(`../../demo/${file}`, import.meta.url));

export function registerLoginPageAssets(router: AppRouter): void {
  registerAssets(router, '/demo', {
    'app.js': { file: built('app.js'), type: JS, precompressed: true },
    'style.css': { file: built('style.css'), type: CSS, precompressed: true },
    'favicon.svg': { file: built('favicon.svg'), type: SVG, precompressed: true },
  });
  // browsers ask for /favicon.ico on their own (the API reference too): never a 404
  registerAssets(router, '', { 'favicon.ico': { file: built('favicon.ico'), type: ICO } });
}

/**
 * The login page's routes under this configuration, for the web role to hand to createApp
 * (`pages`): the assets for `/` and for the OpenID interaction page, `/` when DEMO_PAGE is on.
 */
export function loginPageRoutes(config: Config): (router: AppRouter) => void {
  return (router) => {
    if (config.demo.enabled || config.oidc) registerLoginPageAssets(router);
    if (config.demo.enabled) registerDemoRoutes(router, config);
  };
}

export function registerDemoRoutes(router: AppRouter, config: Config): void {
  const page = encode(renderLoginPage({ brand: { name: config.replies.appName }, flow: { kind: 'client', whatsappNumber: config.demo.whatsappNumber } }));
  router.get('/', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    sendEncoded(ctx, page);
  });
}
