import { fileURLToPath } from 'node:url';
import type { Config } from '../../config.js';
import type { AppRouter } from '../../http/context.js';
import { encode, sendEncoded } from '../../http/encodings.js';
import { CSS, JS, registerAssets } from '../../http/static-assets.js';
import type { ChannelHealth } from '../../messaging/health.js';
import { EMOJI_ALPHABET } from '../../registrations/emoji-alphabet.js';
import { pageLanguage, type PageLanguage } from '../texts.js';
import { CONSOLE_ASSETS, CONSOLE_PATH, renderConsolePage } from './page.js';

const built = (file: string): string => fileURLToPath(new URL(`../../../console/${file}`, import.meta.url));

/**
 * The operator console at `/admin` (always served: it opens nothing by itself, every action is
 * an admin API call with an admin's token) and its script and styles at `/admin/console/`, built
 * into dist/console/ by `npm run build` and served from this origin in their compressed forms.
 * Its Content-Security-Policy is the login page's (src/http/middleware/security-headers.ts:
 * this origin only, no framing). The page is rendered once per language and number.
 */
export function registerConsoleRoutes(router: AppRouter, config: Config, health?: Pick<ChannelHealth, 'writeTo'>): void {
  registerAssets(router, CONSOLE_ASSETS, {
    'console.js': { file: built('console.js'), type: JS, precompressed: true },
    'console.css': { file: built('console.css'), type: CSS, precompressed: true },
  });
  // the emoji pictures are served with the login page's assets (DEMO_PAGE or OpenID clients)
  const icons = config.demo.enabled || config.oidc !== undefined;
  const pictured = icons ? [...EMOJI_ALPHABET] : [];
  const links = { queues: config.adminUser !== undefined && config.adminPassword !== undefined, metrics: true };
  links.metrics = links.queues || config.metricsToken !== undefined;
  const pages = new Map<string, ReturnType<typeof encode>>();
  const page = (lang: PageLanguage, whatsappNumber: string | undefined) => {
    const key = `${lang}\0${whatsappNumber ?? ''}`;
    let encoded = pages.get(key);
    if (encoded === undefined) {
      encoded = encode(renderConsolePage({ appName: config.replies.appName, lang, whatsappNumber, pictured, icons, links }));
      pages.set(key, encoded);
    }
    return encoded;
  };
  router.get(CONSOLE_PATH, async (ctx) => {
    const writeTo = health ? await health.writeTo() : null;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.vary('Accept-Language');
    sendEncoded(ctx, page(pageLanguage(ctx.acceptsLanguages(), config.replies.language), writeTo?.number ?? config.demo.whatsappNumber));
  });
}
