import { ADMIN_SCOPES } from '../../accounts/actor.js';
import { AUDIT_TYPES } from '../../accounts/audit.js';
import { escapeHtml } from '../html.js';
import { fillText, type PageLanguage } from '../texts.js';
import { CONSOLE_TEXTS, type ConsoleTexts } from './texts.js';

/**
 * The operator console at `/admin` (docs/accounts.md, "The console"), built like the login page:
 * the markup is rendered here in the person's language, and the script (browser/, served as
 * /admin/console/console.js) drives it from the JSON in `#console-data`: the chat sign-in with
 * the typed client, then the admin API with the session's access token as bearer. The current
 * screen is `#console[data-view]` (`signin`, `forbidden`, `app`), what the tests key on.
 */
export const CONSOLE_PATH = '/admin';
export const CONSOLE_ASSETS = '/admin/console';

export interface ConsolePageModel {
  appName: string;
  lang: PageLanguage;
  /** the number to write to (digits), shown as text when known */
  whatsappNumber: string | undefined;
  /** the emoji with a picture of ours served at /demo/emoji (none when the login page's assets are off) */
  pictured: string[];
  /** the login page's icons are served (/favicon.ico: DEMO_PAGE on or OpenID clients) */
  icons: boolean;
  /** the queue dashboard and /metrics are served (ADMIN_PASSWORD / METRICS_TOKEN) */
  links: { queues: boolean; metrics: boolean };
}

/** What the console's script reads from `#console-data`. */
export interface ConsoleData {
  texts: ConsoleTexts;
  whatsappNumber: string | undefined;
  pictured: string[];
  scopes: string[];
  eventTypes: string[];
}

const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c');

export function renderConsolePage(model: ConsolePageModel): string {
  const t = CONSOLE_TEXTS[model.lang];
  const e = (text: string, values: Record<string, string> = {}): string => escapeHtml(fillText(text, values));
  const number = model.whatsappNumber
    ? `<p class="number" id="number">${e(t.writeTo).replace('{number}', `<strong>+${escapeHtml(model.whatsappNumber)}</strong>`)}</p>`
    : '';
  const opsLinks = [
    model.links.queues ? `<li><a href="/admin/queues">${e(t.queues)}</a></li>` : '',
    model.links.metrics ? `<li><a href="/metrics">${e(t.metrics)}</a></li>` : '',
  ].join('');
  const scopeBoxes = ADMIN_SCOPES.map(
    (s) => `<label class="check"><input type="checkbox" name="scope" value="${s}"${s === 'users:read' ? ' checked' : ''}> <code>${s}</code></label>`,
  ).join('\n          ');
  const typeOptions = AUDIT_TYPES.map((ty) => `<option value="${ty}">${ty}</option>`).join('');
  const data: ConsoleData = {
    texts: t,
    whatsappNumber: model.whatsappNumber,
    pictured: model.pictured,
    scopes: [...ADMIN_SCOPES],
    eventTypes: [...AUDIT_TYPES],
  };
  return `<!doctype html>
<html lang="${model.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${e(t.title)} · ${escapeHtml(model.appName)}</title>
${model.icons ? '<link rel="icon" href="/favicon.ico" sizes="32x32">\n' : ''}<link rel="stylesheet" href="${CONSOLE_ASSETS}/console.css">
</head>
<body>
<header class="brand"><span class="brand-name">${escapeHtml(model.appName)}</span><span class="brand-sub">${e(t.title)}</span></header>
<main id="console" data-view="signin" data-status="starting">
  <h1 id="title">${e(t.title)}</h1>
  <section id="signin" aria-labelledby="signin-title">
    <h2 id="signin-title">${e(t.signInTitle)}</h2>
    <p class="hint">${e(t.signInHint)}</p>
    <p class="emoji" id="emoji">…</p>
    ${number}
    <p><a id="wa" class="button primary" href="#" hidden>${e(t.openWhatsApp)}</a></p>
    <p id="signin-status" class="status" role="status" aria-live="polite">${e(t.starting)}</p>
    <p><button id="restart" type="button" class="button" hidden>${e(t.getNewCode)}</button></p>
  </section>
  <section id="forbidden" aria-labelledby="forbidden-title" hidden>
    <h2 id="forbidden-title" tabindex="-1">${e(t.notAdminTitle)}</h2>
    <p id="forbidden-text"></p>
    <p class="actions"><button id="recheck" type="button" class="button primary">${e(t.tryAgain)}</button>
      <button type="button" class="button signout">${e(t.signOut)}</button></p>
  </section>
  <div id="app" hidden>
    <nav class="bar" aria-label="${e(t.nav)}">
      <ul class="tabs">
        <li><a href="#people" id="tab-people" data-tab="people" aria-current="page">${e(t.people)}</a></li>
        <li><a href="#keys" id="tab-keys" data-tab="keys">${e(t.keys)}</a></li>
        <li><a href="#events" id="tab-events" data-tab="events">${e(t.events)}</a></li>
        ${opsLinks}
      </ul>
      <p class="who"><span id="who"></span> <button type="button" class="button small signout">${e(t.signOut)}</button></p>
    </nav>
    <p id="notice" class="notice" role="status" aria-live="polite"></p>
    <p id="problem" class="notice bad" role="alert"></p>

    <section id="people" class="tab" aria-labelledby="people-title">
      <h2 id="people-title" tabindex="-1">${e(t.people)}</h2>
      <form id="search" role="search">
        <label for="q">${e(t.searchLabel)}</label>
        <p class="hint" id="q-hint">${e(t.searchHint)}</p>
        <p class="inline"><input id="q" name="q" type="search" autocomplete="off" spellcheck="false" maxlength="200" aria-describedby="q-hint">
          <button type="submit" class="button primary">${e(t.search)}</button></p>
      </form>
      <p id="results-count" class="hint"></p>
      <div class="scroll"><table id="results" hidden>
        <caption class="sr-only">${e(t.people)}</caption>
        <thead><tr><th scope="col">${e(t.name)}</th><th scope="col">${e(t.phone)}</th><th scope="col">${e(t.roles)}</th><th scope="col">${e(t.status)}</th>
          <th scope="col">${e(t.created)}</th><th scope="col">${e(t.lastLogin)}</th></tr></thead>
        <tbody></tbody>
      </table></div>
      <p><button id="more" type="button" class="button" hidden>${e(t.more)}</button></p>
    </section>

    <section id="person" class="tab" aria-labelledby="person-title" hidden>
      <p><a href="#people" id="back">${e(t.back)}</a></p>
      <h2 id="person-title" tabindex="-1"></h2>
      <dl id="person-facts"></dl>
      <p id="block-state" class="notice bad" hidden></p>
      <h3>${e(t.identifiers)}</h3>
      <div class="scroll"><table id="identifiers">
        <thead><tr><th scope="col">${e(t.kind)}</th><th scope="col">${e(t.value)}</th></tr></thead>
        <tbody></tbody>
      </table></div>
      <h3>${e(t.roles)}</h3>
      <form id="roles-form">
        <label for="roles">${e(t.rolesLabel)}</label>
        <p class="hint" id="roles-hint">${e(t.rolesHint)}</p>
        <p class="inline"><input id="roles" name="roles" type="text" autocomplete="off" spellcheck="false" maxlength="500" aria-describedby="roles-hint">
          <button type="submit" class="button">${e(t.saveRoles)}</button></p>
      </form>
      <h3>${e(t.sessions)}</h3>
      <p id="no-sessions" class="hint" hidden>${e(t.noSessions)}</p>
      <div class="scroll"><table id="sessions">
        <thead><tr><th scope="col">${e(t.kind)}</th><th scope="col">${e(t.client)}</th><th scope="col">${e(t.device)}</th><th scope="col">${e(t.ip)}</th>
          <th scope="col">${e(t.created)}</th><th scope="col">${e(t.lastUsed)}</th><th scope="col">${e(t.expires)}</th>
          <th scope="col"><span class="sr-only">${e(t.endSession)}</span></th></tr></thead>
        <tbody></tbody>
      </table></div>
      <p><button id="end-all" type="button" class="button">${e(t.endAllSessions)}</button></p>
      <h3>${e(t.blockTitle)}</h3>
      <form id="block-form">
        <label for="block-reason">${e(t.blockReason)}</label>
        <p class="inline"><input id="block-reason" name="reason" type="text" maxlength="200" autocomplete="off">
          <button type="submit" class="button danger">${e(t.block)}</button></p>
      </form>
      <p><button id="unblock" type="button" class="button" hidden>${e(t.unblock)}</button></p>
      <h3>${e(t.recentEvents)}</h3>
      <p id="no-person-events" class="hint" hidden>${e(t.noEvents)}</p>
      <div class="scroll"><table id="person-events">
        <thead><tr><th scope="col">${e(t.time)}</th><th scope="col">${e(t.type)}</th><th scope="col">${e(t.actor)}</th><th scope="col">${e(t.client)}</th>
          <th scope="col">${e(t.detail)}</th></tr></thead>
        <tbody></tbody>
      </table></div>
      <h3>${e(t.eraseTitle)}</h3>
      <form id="erase-form" class="danger-zone">
        <p id="erase-warning">${e(t.eraseWarning)}</p>
        <label for="erase-confirm" id="erase-label"></label>
        <p class="inline"><input id="erase-confirm" name="confirm" type="text" autocomplete="off" spellcheck="false" aria-describedby="erase-warning">
          <button id="erase" type="submit" class="button danger" aria-disabled="true">${e(t.erase)}</button></p>
      </form>
    </section>

    <section id="keys" class="tab" aria-labelledby="keys-title" hidden>
      <h2 id="keys-title" tabindex="-1">${e(t.keys)}</h2>
      <p class="hint">${e(t.keysIntro)}</p>
      <p id="no-keys" class="hint" hidden>${e(t.noKeys)}</p>
      <div class="scroll"><table id="key-list">
        <thead><tr><th scope="col">${e(t.keyName)}</th><th scope="col">${e(t.scopes)}</th><th scope="col">${e(t.created)}</th>
          <th scope="col">${e(t.lastUsed)}</th><th scope="col"><span class="sr-only">${e(t.revoke)}</span></th></tr></thead>
        <tbody></tbody>
      </table></div>
      <form id="key-form">
        <h3>${e(t.createKey)}</h3>
        <p><label for="key-name">${e(t.keyName)}</label><br><input id="key-name" name="name" type="text" required maxlength="100" autocomplete="off"></p>
        <fieldset>
          <legend>${e(t.scopes)}</legend>
          ${scopeBoxes}
        </fieldset>
        <p><button type="submit" class="button primary">${e(t.createKey)}</button></p>
      </form>
      <div id="secret-box" class="secret" hidden>
        <h3 id="secret-title" tabindex="-1">${e(t.secretTitle)}</h3>
        <p class="hint">${e(t.secretHint)}</p>
        <p class="inline"><code id="secret"></code> <button id="copy" type="button" class="button small">${e(t.copy)}</button></p>
      </div>
    </section>

    <section id="events" class="tab" aria-labelledby="events-title" hidden>
      <h2 id="events-title" tabindex="-1">${e(t.events)}</h2>
      <p class="hint">${e(t.eventsIntro)}</p>
      <form id="events-form">
        <p class="inline"><label for="ev-user">${e(t.filterUser)}</label>
          <input id="ev-user" name="userId" type="text" autocomplete="off" spellcheck="false" maxlength="100"></p>
        <p class="inline"><label for="ev-type">${e(t.filterType)}</label>
          <select id="ev-type" name="type"><option value="">${e(t.anyType)}</option>${typeOptions}</select></p>
        <p><button id="follow" type="submit" class="button primary">${e(t.follow)}</button>
          <button id="unfollow" type="button" class="button" hidden>${e(t.stopFollowing)}</button></p>
      </form>
      <p id="stream-status" class="hint" role="status">${e(t.stopped)}</p>
      <div class="scroll"><table id="live">
        <thead><tr><th scope="col">${e(t.time)}</th><th scope="col">${e(t.type)}</th><th scope="col">${e(t.userId)}</th><th scope="col">${e(t.actor)}</th>
          <th scope="col">${e(t.client)}</th><th scope="col">${e(t.detail)}</th></tr></thead>
        <tbody></tbody>
      </table></div>
    </section>
  </div>
</main>
<footer class="foot">${e(t.footer)}</footer>
<script type="application/json" id="console-data">${scriptJson(data)}</script>
<script type="module" src="${CONSOLE_ASSETS}/console.js"></script>
</body>
</html>
`;
}
