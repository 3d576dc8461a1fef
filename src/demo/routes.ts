import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import type { AppRouter } from '../http/context.js';
import { CSS, JS, registerAssets } from '../http/static-assets.js';

/**
 * The login page at `/` (DEMO_PAGE, on by default): a person sees a login happen end to end.
 * Its script (src/demo/browser/, with the typed client and the QR code library bundled in by
 * esbuild during `npm run build`) and styles are served from dist/demo/, never from a CDN.
 */
const built = (file: string): string => fileURLToPath(new URL(`../../demo/${file}`, import.meta.url));

const escapeAttr = (s: string): string => s.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);

export function loginPage(config: Config): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in with WhatsApp · pin-auth</title>
<link rel="stylesheet" href="/demo/style.css">
</head>
<body>
<main id="app" data-whatsapp="${escapeAttr(config.demo.whatsappNumber ?? '')}" data-status="starting">
  <h1>Sign in with WhatsApp</h1>
  <section id="login" aria-labelledby="login-title">
    <h2 id="login-title">Send this code to us on WhatsApp</h2>
    <p class="emoji" id="emoji" aria-live="polite" aria-label="Your code">…</p>
    <p class="hint">Scan the QR code with your phone's camera, or tap the button on this phone: WhatsApp opens with the message typed in. Just press send.</p>
    <div class="qr-wrap"><img id="qr" alt="QR code that opens WhatsApp with the message typed in" width="220" height="220" hidden></div>
    <p><a id="wa" class="button primary" href="#" hidden>Open WhatsApp</a></p>
    <p id="status" class="status" role="status" aria-live="polite">Preparing a code…</p>
    <p><button id="restart" type="button" class="button" hidden>Get a new code</button></p>
  </section>
  <section id="profile" aria-labelledby="profile-title" hidden>
    <h2 id="profile-title" tabindex="-1">Signed in as <span id="who"></span></h2>
    <dl>
      <dt>Name</dt><dd id="p-name"></dd>
      <dt>Surname</dt><dd id="p-surname"></dd>
      <dt>Phone</dt><dd id="p-phone"></dd>
      <dt>Roles</dt><dd id="p-roles"></dd>
    </dl>
    <p><button id="signout" type="button" class="button">Sign out</button></p>
  </section>
  <p class="foot"><a href="/docs">API reference</a></p>
</main>
<script type="module" src="/demo/app.js"></script>
</body>
</html>
`;
}

export function registerDemoRoutes(router: AppRouter, config: Config): void {
  const page = loginPage(config);
  router.get('/', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = page;
  });
  registerAssets(router, '/demo', {
    'app.js': { file: built('app.js'), type: JS },
    'style.css': { file: built('style.css'), type: CSS },
  });
}
