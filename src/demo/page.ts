import { brandCss, type Brand } from './brand.js';

/**
 * The one login page, for `/` and for the OpenID interaction: the code to send (large), its QR
 * code and a wa.me link with the message typed in, the code's countdown, a live status
 * (waiting, awaiting confirmation, signed in, denied, expired → a new code, errors), branded for
 * whoever asks. The markup is rendered here; the script (src/demo/browser/, served as
 * /demo/app.js) drives it from the JSON in `#login-data`, with the typed client at `/` or the
 * interaction's status URL.
 */
export type PageFlow =
  /** `/`: the script registers a code with the typed client, then shows the profile */
  | { kind: 'client'; whatsappNumber: string | undefined }
  /** the OpenID interaction: the server registered the code; the script polls `statusUrl` */
  | { kind: 'interaction'; statusUrl: string; emojiString: string; text: string; waLink: string; expiresIn: number };

export interface LoginPageModel {
  brand: Brand;
  flow: PageFlow;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON safe inside a `<script>` element (no `</script>` can close it early). */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c');

/** The images a page shows besides its own: a client's logo (for the Content-Security-Policy). */
export function imageOrigins(model: LoginPageModel): string[] {
  return model.brand.logoUri ? [new URL(model.brand.logoUri).origin] : [];
}

/** `/` only: who signed in, and a way out. */
const PROFILE = `  <section id="profile" aria-labelledby="profile-title" hidden>
    <h2 id="profile-title" tabindex="-1">Signed in as <span id="who"></span></h2>
    <dl>
      <dt>Name</dt><dd id="p-name"></dd>
      <dt>Surname</dt><dd id="p-surname"></dd>
      <dt>Phone</dt><dd id="p-phone"></dd>
      <dt>Roles</dt><dd id="p-roles"></dd>
    </dl>
    <p><button id="signout" type="button" class="button">Sign out</button></p>
  </section>
`;

/** The frame every page of ours shares: head (icon, styles, the brand's colours), the brand's header, a footer. */
function shell(brand: Brand, title: string, main: string, foot: string, scripts = ''): string {
  const css = brandCss(brand);
  const logo = brand.logoUri ? `<img class="logo" src="${escapeHtml(brand.logoUri)}" alt="" width="40" height="40">` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="/favicon.ico" sizes="32x32">
<link rel="icon" href="/demo/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/demo/style.css">${css ? `\n<style>${css}</style>` : ''}
</head>
<body>
<header class="brand">${logo}<span class="brand-name">${escapeHtml(brand.name)}</span></header>
${main}
<footer class="foot">${foot}</footer>
${scripts}</body>
</html>
`;
}

/**
 * A page with a heading and a few lines of our own (already escaped), in the login page's look:
 * the OpenID provider's sign-out question, its signed-out and error pages.
 */
export function renderMessagePage(brand: Brand, title: string, bodyHtml: string): string {
  return shell(brand, escapeHtml(title), `<main class="message">\n  <h1>${escapeHtml(title)}</h1>\n  ${bodyHtml}\n</main>`, '');
}

export function renderLoginPage(model: LoginPageModel): string {
  const { brand, flow } = model;
  const name = escapeHtml(brand.name);
  const code = flow.kind === 'interaction' ? flow : undefined;
  const title = flow.kind === 'interaction' ? `Sign in to ${name} with WhatsApp` : 'Sign in with WhatsApp';
  const main = `<main id="app" data-flow="${flow.kind}" data-status="starting">
  <h1>${title}</h1>
  <section id="login" aria-labelledby="login-title">
    <h2 id="login-title">Send this code to us on WhatsApp</h2>
    <div class="code-grid">
      <div>
        <p class="emoji" id="emoji"${code ? ` data-emoji="${escapeHtml(code.emojiString)}">${escapeHtml(code.emojiString)}` : '>…'}</p>
        <p class="hint">Scan the QR code with your phone's camera, or tap the button on this phone: WhatsApp opens with the message typed in. Just press send.</p>
        <p><a id="wa" class="button primary" href="${code ? escapeHtml(code.waLink) : '#'}"${code ? '' : ' hidden'}>Open WhatsApp</a></p>
        <p class="countdown" id="countdown-line" hidden>The code is valid for <span id="countdown" role="timer">–</span>.</p>
        <p id="status" class="status" role="status" aria-live="polite">${code ? 'Waiting for your message…' : 'Preparing a code…'}</p>
        <p class="actions"><button id="restart" type="button" class="button" hidden>Get a new code</button><a id="back" class="button primary" href="#" hidden>Back to ${name}</a></p>
      </div>
      <div class="qr-wrap"><img id="qr" alt="QR code that opens WhatsApp with the message typed in" width="220" height="220" hidden></div>
    </div>
  </section>
${flow.kind === 'client' ? PROFILE : ''}</main>`;
  const foot = flow.kind === 'client' ? '<a href="/docs">API reference</a>' : 'Signing in with a chat message: no password, no SMS code.';
  const scripts = `<script type="application/json" id="login-data">${scriptJson(flow)}</script>
<script type="module" src="/demo/app.js"></script>
`;
  return shell(brand, title, main, foot, scripts);
}
