import { EMOJI_ALPHABET } from '../registrations/emoji-alphabet.js';
import { brandCss, type Brand } from './brand.js';
import { emojiHtml } from './emoji.js';
import { escapeHtml } from './html.js';
import { fillText, PAGE_TEXTS, scriptTexts, type PageLanguage, type PageTexts, type ScriptTexts } from './texts.js';

export { escapeHtml };

/**
 * The one login page, for `/` and for the OpenID interaction: the code to send (large), its QR
 * code and a wa.me link with the message typed in, the number to write to, the code's
 * countdown, a live status (waiting, awaiting confirmation, signed in, denied, expired → a new
 * code, errors), branded for whoever asks, in the person's language (texts.ts). On a phone the
 * button comes first and there is no QR code (style.css). The markup is rendered here; the
 * script (src/demo/browser/, served as /demo/app.js) drives it from the JSON in `#login-data`,
 * with the typed client at `/` or the interaction's status URL.
 */
export type PageFlow =
  /** `/`: the script registers a code with the typed client, then shows the profile */
  | { kind: 'client'; whatsappNumber: string | undefined }
  /** the OpenID interaction: the server registered the code; the script polls `statusUrl` */
  | { kind: 'interaction'; statusUrl: string; emojiString: string; text: string; waLink: string; expiresIn: number };

export interface LoginPageModel {
  brand: Brand;
  flow: PageFlow;
  /** the page's language (texts.ts: pageLanguage); English when not given */
  lang?: PageLanguage;
  /** the service's WhatsApp number (digits, WHATSAPP_NUMBER), shown as text when set */
  whatsappNumber?: string | undefined;
}

/** What the page's script reads from `#login-data`. */
export interface LoginData {
  flow: PageFlow;
  texts: ScriptTexts;
  /** the emoji with a picture of ours (emoji.ts) */
  pictured: string[];
}

/** Every emoji the server draws has its picture (routes.ts serves them). */
const PICTURED = new Set(EMOJI_ALPHABET);

/** JSON safe inside a `<script>` element (no `</script>` can close it early). */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c');

/** The images a page shows besides its own: a client's logo (for the Content-Security-Policy). */
export function imageOrigins(model: LoginPageModel): string[] {
  return model.brand.logoUri ? [new URL(model.brand.logoUri).origin] : [];
}

/** `/` only: who signed in, and a way out. */
const profile = (t: PageTexts): string => {
  const [before, after] = escapeHtml(t.signedInAs).split('{who}') as [string, string?];
  return `  <section id="profile" aria-labelledby="profile-title" hidden>
    <h2 id="profile-title" tabindex="-1">${before}<span id="who"></span>${after ?? ''}</h2>
    <dl>
      <dt>${escapeHtml(t.name)}</dt><dd id="p-name"></dd>
      <dt>${escapeHtml(t.surname)}</dt><dd id="p-surname"></dd>
      <dt>${escapeHtml(t.phone)}</dt><dd id="p-phone"></dd>
      <dt>${escapeHtml(t.roles)}</dt><dd id="p-roles"></dd>
    </dl>
    <p><button id="signout" type="button" class="button">${escapeHtml(t.signOut)}</button></p>
  </section>
`;
};

/** The frame every page of ours shares: head (icon, styles, the brand's colours), the brand's header, a footer. */
function shell(brand: Brand, title: string, main: string, foot: string, scripts = '', lang: PageLanguage = 'en'): string {
  const css = brandCss(brand);
  const logo = brand.logoUri ? `<img class="logo" src="${escapeHtml(brand.logoUri)}" alt="" width="40" height="40">` : '';
  return `<!doctype html>
<html lang="${lang}">
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
  const lang = model.lang ?? 'en';
  const t = PAGE_TEXTS[lang];
  const e = (text: string, values: Record<string, string> = {}): string => escapeHtml(fillText(text, values));
  const code = flow.kind === 'interaction' ? flow : undefined;
  const title = flow.kind === 'interaction' ? e(t.titleFor, { name: brand.name }) : e(t.title);
  const [validBefore, validAfter] = e(t.validFor).split('{time}') as [string, string?];
  const number = model.whatsappNumber
    ? `\n        <p class="number" id="number">${e(t.writeTo).replace('{number}', `<strong>+${model.whatsappNumber}</strong>`)}</p>`
    : '';
  // the button first (on a phone it is the way: style.css moves it below the code on wide screens)
  const main = `<main id="app" data-flow="${flow.kind}" data-status="starting">
  <h1>${title}</h1>
  <section id="login" aria-labelledby="login-title">
    <h2 id="login-title">${e(t.sendThisCode)}</h2>
    <div class="code-grid">
      <div class="code-main">
        <p class="wa-line"><a id="wa" class="button primary" href="${code ? escapeHtml(code.waLink) : '#'}"${code ? '' : ' hidden'}>${e(t.openWhatsApp)}</a></p>
        <p class="emoji" id="emoji"${code ? ` data-emoji="${escapeHtml(code.emojiString)}">${emojiHtml(code.emojiString, PICTURED)}` : '>…'}</p>${number}
        <p class="hint"><span class="wide-only">${e(t.hintQr)}</span><span class="phone-only">${e(t.hintPhone)}</span></p>
        <p class="countdown" id="countdown-line" hidden>${validBefore}<span id="countdown" role="timer">–</span>${validAfter ?? ''}</p>
        <p id="status" class="status" role="status" aria-live="polite">${code ? e(t.waiting) : e(t.starting)}</p>
        <p class="actions">
          <button id="restart" type="button" class="button" hidden>${e(t.getNewCode)}</button>
          <a id="back" class="button primary" href="#" hidden>${e(t.backTo, { name: brand.name })}</a>
        </p>
      </div>
      <div class="qr-wrap"><img id="qr" alt="${e(t.qrAlt)}" width="220" height="220" hidden></div>
    </div>
  </section>
${flow.kind === 'client' ? profile(t) : ''}</main>`;
  const data: LoginData = { flow, texts: scriptTexts(t), pictured: [...PICTURED] };
  const scripts = `<script type="application/json" id="login-data">${scriptJson(data)}</script>
<script type="module" src="/demo/app.js"></script>
`;
  return shell(brand, title, main, e(t.footer), scripts, lang);
}
