/**
 * The operator console's script (bundled by esbuild into dist/console/console.js) over the
 * markup of src/demo/console/page.ts. Three screens (`#console[data-view]`): the chat sign-in
 * (the typed client registers a code and waits over Socket.IO, polling check-login as its
 * fallback), "not an admin" (GET /me answered 403), and the console itself, whose sections follow
 * the address's hash (`#people`, `#person/<id>`, `#keys`, `#events`) so the browser's back button
 * and bookmarks work. Everything from the API is written as text (textContent), never as HTML.
 */
import type { LoginAttempt } from '@pin-auth/client';
import { emojiHtml } from '../../emoji.js';
import { fillText } from '../../texts.js';
import type { ConsoleData } from '../page.js';
import { AdminApi, ApiError } from './api.js';
import type { ApiKeyView, AuditRecord, Me, UserDetail, UserSummary } from './shapes.js';
import { readEvents, SseParser } from './sse.js';

const data = JSON.parse(document.getElementById('console-data')!.textContent ?? '{}') as ConsoleData;
const t = data.texts;
const pictured = new Set(data.pictured);
const api = new AdminApi(data.whatsappNumber);
const lang = document.documentElement.lang || 'en';

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;
const root = $('console');

// ---------- small DOM helpers ----------

type Child = Node | string;
function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

const when = (iso: string | null | undefined): string => {
  if (!iso) return t.never;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(lang, { dateStyle: 'medium', timeStyle: 'short' });
};
const timeCell = (iso: string | null | undefined): HTMLElement => (iso ? h('td', {}, h('time', { datetime: iso }, when(iso))) : h('td', {}, t.never));
const fullName = (u: { name: string; surname: string }): string => [u.name, u.surname].filter(Boolean).join(' ');
const detailText = (d: Record<string, unknown>): string =>
  Object.entries(d)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
const describe = (err: unknown): string => (err instanceof ApiError ? `${err.message} (${err.code})` : err instanceof Error ? err.message : String(err));

function fill(tbody: HTMLElement, rows: HTMLElement[]): void {
  tbody.replaceChildren(...rows);
}

function notice(text: string): void {
  $('problem').textContent = '';
  $('notice').textContent = text;
}
function problem(text: string): void {
  $('notice').textContent = '';
  $('problem').textContent = text;
}
function clearNotices(): void {
  $('notice').textContent = '';
  $('problem').textContent = '';
}

/** An admin call's failure: back to the sign-in when the session is over, else said on screen. */
function failed(err: unknown): void {
  if (err instanceof ApiError && err.status === 401) {
    void showSignIn();
    return;
  }
  problem(fillText(t.failedAction, { message: describe(err) }));
  // refused: the admin role may have been taken away meanwhile (GET /me says)
  if (err instanceof ApiError && err.status === 403) void stillAdmin();
}

async function stillAdmin(): Promise<void> {
  try {
    await api.call<Me>('GET', '/me');
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) await checkAdmin();
  }
}

/** Runs an action of a button or form: its control is busy meanwhile, a failure is shown. */
async function act(control: HTMLElement | null, run: () => Promise<void>): Promise<void> {
  if (control?.getAttribute('aria-busy') === 'true') return;
  control?.setAttribute('aria-busy', 'true');
  clearNotices();
  try {
    await run();
  } catch (err) {
    failed(err);
  } finally {
    control?.removeAttribute('aria-busy');
  }
}

// ---------- screens ----------

type View = 'signin' | 'forbidden' | 'app';
function view(v: View): void {
  root.dataset.view = v;
  $('signin').hidden = v !== 'signin';
  $('forbidden').hidden = v !== 'forbidden';
  $('app').hidden = v !== 'app';
}

// ---------- sign in ----------

let attempt: LoginAttempt | undefined;
const SIGNIN_TEXT: Record<string, keyof typeof t> = {
  waiting: 'waiting',
  'awaiting-confirmation': 'awaitingConfirmation',
  'signed-in': 'signedIn',
  expired: 'expired',
  denied: 'denied',
  failed: 'failed',
};

function signInStatus(status: string, text?: string): void {
  root.dataset.status = status;
  const line = $('signin-status');
  line.textContent = text ?? (SIGNIN_TEXT[status] ? t[SIGNIN_TEXT[status]] : '');
  const ended = status === 'expired' || status === 'denied' || status === 'failed' || status === 'error';
  line.className = `status${ended ? ' bad' : status === 'signed-in' ? ' good' : ''}`;
  $('restart').hidden = !ended;
  const live = status === 'waiting' || status === 'awaiting-confirmation';
  $('wa').hidden = !live;
  $('emoji').hidden = !live;
  if (ended) $('restart').focus();
}

async function showSignIn(): Promise<void> {
  stopStream();
  api.use(undefined);
  view('signin');
  await attempt?.cancel().catch(() => undefined);
  attempt = undefined;
  signInStatus('starting', t.starting);
  $('emoji').textContent = '…';
  let login: LoginAttempt;
  try {
    login = await api.client.startLogin();
  } catch (err) {
    signInStatus('error', fillText(t.cannotStart, { reason: describe(err) }));
    return;
  }
  attempt = login;
  $('emoji').innerHTML = emojiHtml(login.emojiString, pictured);
  const wa = $<HTMLAnchorElement>('wa');
  wa.href = login.waLink ?? `https://wa.me/?text=${encodeURIComponent(login.text)}`;
  wa.setAttribute('aria-label', fillText(t.openWhatsAppWith, { text: login.text }));
  login.onStatus((s) => {
    if (attempt === login && (s === 'waiting' || s === 'awaiting-confirmation')) signInStatus(s);
  });
  try {
    const session = await login.session;
    if (attempt !== login) return;
    api.use(session);
    signInStatus('signed-in');
    await checkAdmin();
  } catch {
    if (attempt !== login) return;
    const s = login.status;
    signInStatus(s === 'expired' || s === 'denied' ? s : 'failed');
  }
}

// ---------- who is signed in ----------

async function checkAdmin(): Promise<void> {
  const session = api.signedIn;
  if (!session) return showSignIn();
  const who = session.user.name || session.user.phone || session.user.id;
  try {
    await api.call<Me>('GET', '/me');
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) {
      view('forbidden');
      $('forbidden-text').textContent = fillText(t.notAdmin, { who });
      $('forbidden-title').focus();
      return;
    }
    if (err instanceof ApiError && err.status === 401) return showSignIn();
    view('forbidden');
    $('forbidden-text').textContent = fillText(t.failedAction, { message: describe(err) });
    return;
  }
  $('who').textContent = fillText(t.signedInAs, { who });
  view('app');
  await route();
}

// ---------- sections ----------

const TABS = ['people', 'keys', 'events'] as const;
type Tab = (typeof TABS)[number] | 'person';

function showTab(tab: Tab): void {
  for (const id of [...TABS, 'person']) $(id).hidden = id !== tab;
  for (const id of TABS) {
    const link = $(`tab-${id}`);
    if (id === tab || (tab === 'person' && id === 'people')) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

let searched = false;
/** said once the next section is shown (an erase's receipt, after the search it returns to) */
let carried: string | undefined;
async function route(): Promise<void> {
  if (root.dataset.view !== 'app') return;
  const hash = decodeURIComponent(location.hash.slice(1));
  clearNotices();
  if (hash.startsWith('person/')) {
    showTab('person');
    await openPerson(hash.slice('person/'.length));
    return;
  }
  const tab: Tab = (TABS as readonly string[]).includes(hash) ? (hash as Tab) : 'people';
  showTab(tab);
  // the section's heading takes the focus at once (a screen reader hears where it is), then its data loads
  if (hash !== '') $(`${tab}-title`).focus();
  if (tab === 'people' && !searched) await act(null, () => search(false));
  if (tab === 'keys') await act(null, loadKeys);
  if (carried !== undefined) notice(carried);
  carried = undefined;
}

// ---------- people ----------

let nextCursor: string | null = null;
let lastQuery = '';

async function search(more: boolean): Promise<void> {
  searched = true;
  const q = more ? lastQuery : $<HTMLInputElement>('q').value.trim();
  lastQuery = q;
  const params = new URLSearchParams({ limit: '25' });
  if (q) params.set('q', q);
  if (more && nextCursor) params.set('cursor', nextCursor);
  const page = await api.call<{ users: UserSummary[]; next: string | null }>('GET', `/users?${params}`);
  nextCursor = page.next;
  const tbody = $('results').querySelector('tbody')!;
  const rows = page.users.map((u) =>
    h(
      'tr',
      { 'data-user': u.id },
      h('td', {}, h('a', { href: `#person/${encodeURIComponent(u.id)}` }, fullName(u) || u.id)),
      h('td', {}, u.phone ?? '–'),
      h('td', {}, u.roles.join(', ')),
      h('td', {}, u.blocked ? t.blocked : t.active),
      timeCell(u.createdAt),
      timeCell(u.lastLoginAt),
    ),
  );
  if (more) tbody.append(...rows);
  else fill(tbody, rows);
  const shown = tbody.children.length;
  $('results').hidden = shown === 0;
  $('results-count').textContent = shown === 0 ? t.noResults : fillText(t.results, { count: String(shown) });
  $('more').hidden = nextCursor === null;
}

$('search').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void act(ev.submitter ?? null, () => search(false));
});
$('more').addEventListener('click', (ev) => void act(ev.currentTarget as HTMLElement, () => search(true)));

// ---------- one person ----------

let person: UserDetail | undefined;
const eraseWord = (u: UserDetail): string => fullName(u) || u.id;
const base = (u: { id: string }): string => `/users/${encodeURIComponent(u.id)}`;

async function openPerson(id: string, focus = true): Promise<void> {
  person = undefined;
  $('person-title').textContent = t.loading;
  try {
    person = (await api.call<{ user: UserDetail }>('GET', `/users/${encodeURIComponent(id)}`)).user;
  } catch (err) {
    $('person-title').textContent = id;
    failed(err);
    return;
  }
  renderPerson(person);
  if (focus) $('person-title').focus();
}

function renderPerson(u: UserDetail): void {
  $('person-title').textContent = fullName(u) || u.id;
  const facts: [string, string | HTMLElement][] = [
    [t.userId, h('code', {}, u.id)],
    [t.name, fullName(u) || '–'],
    [t.phone, u.phone ?? '–'],
    [t.roles, u.roles.join(', ')],
    [t.status, u.blocked ? t.blocked : t.active],
    [t.created, when(u.createdAt)],
    [t.lastLogin, when(u.lastLoginAt)],
  ];
  $('person-facts').replaceChildren(...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  const blockState = $('block-state');
  blockState.hidden = !u.blocked;
  blockState.textContent = u.blocked ? fillText(t.blockedSince, { when: when(u.blockedAt), who: u.blockedBy ?? '–', reason: u.blockReason ?? '–' }) : '';
  $('block-form').hidden = u.blocked;
  $('unblock').hidden = !u.blocked;
  fill(
    $('identifiers').querySelector('tbody')!,
    u.identifiers.map((i) => h('tr', {}, h('td', {}, i.kind), h('td', {}, h('code', {}, i.value)))),
  );
  $<HTMLInputElement>('roles').value = u.roles.join(', ');
  $('no-sessions').hidden = u.sessions.length > 0;
  $('sessions').hidden = u.sessions.length === 0;
  $('end-all').hidden = u.sessions.length === 0;
  fill(
    $('sessions').querySelector('tbody')!,
    u.sessions.map((s) => {
      const client = s.client === null ? '–' : typeof s.client === 'string' ? s.client : (s.client.name ?? s.client.id);
      const end = h(
        'button',
        { type: 'button', class: 'button small', 'data-session': s.id, 'aria-label': fillText(t.endSessionOf, { device: s.device || s.id }) },
        t.endSession,
      );
      end.addEventListener('click', () =>
        act(end, async () => {
          await api.call('DELETE', `${base(u)}/sessions/${encodeURIComponent(s.id)}`);
          notice(fillText(t.sessionsEnded, { count: '1' }));
          await openPerson(u.id, false);
        }),
      );
      return h(
        'tr',
        {},
        h('td', {}, s.kind),
        h('td', {}, client),
        h('td', {}, s.device || '–'),
        h('td', {}, s.ip || '–'),
        timeCell(s.createdAt),
        timeCell(s.lastUsedAt),
        timeCell(s.expiresAt),
        h('td', {}, end),
      );
    }),
  );
  $('no-person-events').hidden = u.events.length > 0;
  $('person-events').hidden = u.events.length === 0;
  fill(
    $('person-events').querySelector('tbody')!,
    u.events.map((e) =>
      h('tr', {}, timeCell(e.at), h('td', {}, e.type), h('td', {}, e.actor), h('td', {}, e.client ?? '–'), h('td', {}, detailText(e.detail ?? {}))),
    ),
  );
  $('erase-label').textContent = fillText(t.eraseConfirmLabel, { name: eraseWord(u) });
  const confirm = $<HTMLInputElement>('erase-confirm');
  confirm.value = '';
  eraseReady();
}

/** The typed confirmation: the person's name as shown, or their user id. */
const eraseConfirmed = (): boolean => {
  const typed = $<HTMLInputElement>('erase-confirm').value.trim();
  return person !== undefined && typed !== '' && (typed === eraseWord(person) || typed === person.id);
};
const eraseReady = (): void => $('erase').setAttribute('aria-disabled', String(!eraseConfirmed()));
$('erase-confirm').addEventListener('input', eraseReady);

$('roles-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const u = person;
  if (!u) return;
  const roles = [
    ...new Set(
      $<HTMLInputElement>('roles')
        .value.split(',')
        .map((r) => r.trim())
        .filter(Boolean),
    ),
  ];
  void act(ev.submitter ?? null, async () => {
    const r = await api.call<{ roles: string[] }>('PUT', `${base(u)}/roles`, { roles });
    notice(fillText(t.rolesSaved, { roles: r.roles.join(', ') }));
    await openPerson(u.id, false);
  });
});

$('end-all').addEventListener('click', (ev) => {
  const u = person;
  if (!u) return;
  void act(ev.currentTarget as HTMLElement, async () => {
    const r = await api.call<{ closed: number }>('DELETE', `${base(u)}/sessions`);
    notice(fillText(t.sessionsEnded, { count: String(r.closed) }));
    await openPerson(u.id, false);
  });
});

$('block-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const u = person;
  if (!u) return;
  const reason = $<HTMLInputElement>('block-reason').value.trim();
  void act(ev.submitter ?? null, async () => {
    const r = await api.call<{ sessionsEnded: number }>('POST', `${base(u)}/block`, reason ? { reason } : {});
    $<HTMLInputElement>('block-reason').value = '';
    await openPerson(u.id, false);
    notice(fillText(t.blockedDone, { count: String(r.sessionsEnded ?? 0) }));
    $('unblock').focus();
  });
});

$('unblock').addEventListener('click', (ev) => {
  const u = person;
  if (!u) return;
  void act(ev.currentTarget as HTMLElement, async () => {
    await api.call('DELETE', `${base(u)}/block`);
    await openPerson(u.id, false);
    notice(t.unblockedDone);
    $('block-reason').focus();
  });
});

$('erase-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const u = person;
  if (!u) return;
  if (!eraseConfirmed()) {
    problem(t.eraseMismatch);
    $('erase-confirm').focus();
    return;
  }
  void act(ev.submitter ?? null, async () => {
    const r = await api.call<{ receipt: { id: string; erasedAt: string } }>('DELETE', base(u));
    person = undefined;
    searched = false;
    // the hash change runs the search again, then says the receipt
    carried = fillText(t.erased, { id: r.receipt.id, erasedAt: when(r.receipt.erasedAt) });
    location.hash = '#people';
  });
});

// ---------- API keys ----------

async function loadKeys(): Promise<void> {
  const { keys } = await api.call<{ keys: ApiKeyView[] }>('GET', '/keys');
  $('no-keys').hidden = keys.length > 0;
  $('key-list').hidden = keys.length === 0;
  fill(
    $('key-list').querySelector('tbody')!,
    keys.map((k) => {
      if (k.revokedAt) {
        return h(
          'tr',
          { 'data-key': k.id, class: 'revoked' },
          h('td', {}, k.name),
          h('td', {}, k.scopes.join(', ')),
          timeCell(k.createdAt),
          timeCell(k.lastUsedAt),
          h('td', {}, fillText(t.revokedAt, { when: when(k.revokedAt) })),
        );
      }
      const revoke = h(
        'button',
        { type: 'button', class: 'button small danger', 'data-key': k.id, 'aria-label': fillText(t.revokeOf, { name: k.name }) },
        t.revoke,
      );
      revoke.addEventListener('click', () =>
        act(revoke, async () => {
          await api.call('DELETE', `/keys/${encodeURIComponent(k.id)}`);
          await loadKeys();
          notice(fillText(t.revoked, { name: k.name }));
          $('keys-title').focus();
        }),
      );
      return h(
        'tr',
        { 'data-key': k.id },
        h('td', {}, k.name),
        h('td', {}, k.scopes.join(', ')),
        timeCell(k.createdAt),
        timeCell(k.lastUsedAt),
        h('td', {}, revoke),
      );
    }),
  );
}

$('key-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const name = $<HTMLInputElement>('key-name').value.trim();
  const scopes = [...document.querySelectorAll<HTMLInputElement>('#key-form input[name=scope]:checked')].map((c) => c.value);
  if (scopes.length === 0) {
    problem(t.scopeRequired);
    return;
  }
  void act(ev.submitter ?? null, async () => {
    const r = await api.call<{ key: ApiKeyView; secret: string }>('POST', '/keys', { name, scopes });
    $<HTMLInputElement>('key-name').value = '';
    await loadKeys().catch(() => undefined); // the secret is shown even when the list can't be read again
    $('secret').textContent = r.secret;
    $('secret-box').hidden = false;
    $('secret-title').focus();
  });
});

$('copy').addEventListener('click', async () => {
  const secret = $('secret').textContent ?? '';
  try {
    await navigator.clipboard.writeText(secret);
  } catch {
    // no clipboard permission: the secret is selected for the person to copy
    const range = document.createRange();
    range.selectNodeContents($('secret'));
    getSelection()?.removeAllRanges();
    getSelection()?.addRange(range);
    return;
  }
  notice(t.copied);
});

// ---------- live events ----------

const MAX_LIVE_ROWS = 200;
let stream: AbortController | undefined;

function liveRow(e: AuditRecord): void {
  const tbody = $('live').querySelector('tbody')!;
  if (tbody.querySelector(`tr[data-event="${CSS.escape(e.id)}"]`)) return;
  const user = e.userId ? h('a', { href: `#person/${encodeURIComponent(e.userId)}` }, e.userId) : '–';
  tbody.prepend(
    h(
      'tr',
      { 'data-event': e.id },
      timeCell(e.at),
      h('td', {}, e.type),
      h('td', {}, user),
      h('td', {}, e.actor),
      h('td', {}, e.client ?? '–'),
      h('td', {}, detailText(e.detail ?? {})),
    ),
  );
  while (tbody.children.length > MAX_LIVE_ROWS) tbody.lastElementChild?.remove();
}

function stopStream(): void {
  stream?.abort();
  stream = undefined;
  $('follow').hidden = false;
  $('unfollow').hidden = true;
  root.dataset.stream = 'off';
  $('stream-status').textContent = t.stopped;
}

/**
 * GET /events for the latest, then GET /events/stream from the newest one, read with fetch (the
 * bearer header) and parsed here; after a drop it reconnects with Last-Event-ID, a little later
 * each time, until stopped.
 */
async function follow(filter: URLSearchParams): Promise<void> {
  stopStream();
  const ctl = new AbortController();
  stream = ctl;
  $('follow').hidden = true;
  $('unfollow').hidden = false;
  $('unfollow').focus();
  $('live').querySelector('tbody')!.replaceChildren();
  let latest: { events: AuditRecord[] };
  try {
    latest = await api.call<{ events: AuditRecord[] }>('GET', `/events?${new URLSearchParams([...filter, ['limit', '20']])}`);
  } catch (err) {
    stopStream();
    throw err;
  }
  for (const e of [...latest.events].reverse()) liveRow(e);
  const parser = new SseParser((ev) => {
    try {
      liveRow(JSON.parse(ev.data) as AuditRecord);
    } catch {
      // not an event of ours (a keep-alive with data): skipped
    }
  });
  parser.lastEventId = latest.events[0]?.id ?? '';
  let wait = 1000;
  while (!ctl.signal.aborted) {
    const query = new URLSearchParams(filter);
    if (parser.lastEventId) query.set('after', parser.lastEventId);
    try {
      const res = await api.raw(`/events/stream?${query}`, {
        headers: { accept: 'text/event-stream', ...(parser.lastEventId ? { 'last-event-id': parser.lastEventId } : {}) },
        signal: ctl.signal,
      });
      if (!res.ok || !res.body) {
        const body = (await res.json().catch(() => ({}))) as { error?: string; message?: string };
        throw new ApiError(res.status, body.error ?? `HTTP_${res.status}`, body.message ?? `HTTP ${res.status}`);
      }
      root.dataset.stream = 'on';
      $('stream-status').textContent = t.following;
      wait = 1000;
      await readEvents(res.body, parser, ctl.signal);
    } catch (err) {
      if (ctl.signal.aborted) return;
      if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429) {
        stopStream();
        $('stream-status').textContent = fillText(t.streamLost, { reason: describe(err) });
        if (err.status === 401) void showSignIn();
        return;
      }
      root.dataset.stream = 'reconnecting';
      $('stream-status').textContent = fillText(t.streamLost, { reason: describe(err) });
    }
    if (ctl.signal.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, parser.retryMs ?? wait));
    wait = Math.min(wait * 2, 30_000);
  }
}

$('events-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const filter = new URLSearchParams();
  const user = $<HTMLInputElement>('ev-user').value.trim();
  const type = $<HTMLSelectElement>('ev-type').value;
  if (user) filter.set('userId', user);
  if (type) filter.set('type', type);
  void act(null, () => follow(filter));
});
$('unfollow').addEventListener('click', () => {
  stopStream();
  $('follow').focus();
});

// ---------- wiring ----------

for (const b of document.querySelectorAll<HTMLButtonElement>('button.signout')) {
  b.addEventListener('click', () => {
    void (async () => {
      stopStream();
      await api.signOut();
      location.hash = '';
      await showSignIn();
    })();
  });
}
$('recheck').addEventListener('click', (ev) => void act(ev.currentTarget as HTMLElement, checkAdmin));
$('restart').addEventListener('click', () => void showSignIn());
window.addEventListener('hashchange', () => void route());

if (api.signedIn) void checkAdmin();
else void showSignIn();
