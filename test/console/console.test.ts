import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { grantAdmin } from '../helpers/admin.js';
import { randomPin } from '../helpers/flow.js';
import { eventually, get, post, request } from '../helpers/http.js';
import { evolutionChat, PRODUCTION_ENV } from '../helpers/production.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { axeViolations, chromiumOrSkip, launch, shot, watchForeignRequests, watchProblems } from '../demo/browser.js';

/**
 * The operator console at /admin in Chromium against a production deployment (a web node and a
 * worker, NODE_ENV=production): signed in through the chat like any person, refused without the
 * admin role, then every screen driven as an operator would, mostly from the keyboard, with axe
 * finding nothing in English and in Portuguese, no request leaving the origin and no framing.
 */

const ADMIN_USER = 'ops';
const ADMIN_PASSWORD = 'correct horse battery staple, twice as long';
const API = '/admin/api/v1';

/** `+44 7700 …` written the way a person would type it, not E.164. */
const spaced = (e164: string): string => `${e164.slice(0, 3)} ${e164.slice(3, 7)} ${e164.slice(7)}`;
const phone = (): string => `+44740${String(Math.floor(1e6 + Math.random() * 9e6))}`;

/** A person signed in over HTTP as an app would (the server draws the code in production). */
async function appLogin(base: string, opts: { phone: string; pushName: string }) {
  const pin = randomPin();
  const reg = await post<{ emojiString: string }>(base, '/register-pin', { pin });
  expect(reg.status, reg.text).to.equal(200);
  const hook = await evolutionChat(base, `PIN: ${reg.body.emojiString}`, opts);
  expect(hook.status, hook.text).to.equal(200);
  return eventually(async () => {
    const r = await post<{ verified: boolean; token: string; refreshToken: string; user: { id: string } }>(base, '/check-login', { pin });
    return r.body.verified ? r.body : undefined;
  });
}

const view = (page: Page, v: string, timeout = 20000) => page.waitForSelector(`#console[data-view="${v}"]`, { timeout });
const code = async (page: Page): Promise<string> => {
  await page.waitForSelector('#console[data-status="waiting"]');
  return (await page.textContent('#emoji'))!.trim();
};
const focused = (page: Page): Promise<string | undefined> => page.evaluate(() => document.activeElement?.id);

/** The session the console keeps for this tab. */
const sessionOf = (page: Page) =>
  page.evaluate(() => JSON.parse(sessionStorage.getItem('pin-auth-console-session') ?? 'null') as { token: string; user: { id: string } } | null);

/**
 * The console's chat sign-in: the code on screen sent from `from`; a question to confirm in the
 * chat (admins always get one) answered YES.
 */
async function signIn(page: Page, base: string, from: { phone: string; pushName: string }): Promise<void> {
  const text = `PIN: ${await code(page)}`;
  const hook = await evolutionChat(base, text, from);
  expect(hook.status, hook.text).to.equal(200);
  const next = await page.waitForSelector('#console[data-status="awaiting-confirmation"], #console:not([data-view="signin"])', { timeout: 20000 });
  if ((await next.getAttribute('data-status')) === 'awaiting-confirmation') {
    expect((await evolutionChat(base, 'YES', from)).status).to.equal(200);
  }
  await page.waitForSelector('#console:not([data-view="signin"])', { timeout: 20000 });
}

describe('console: the operator console at /admin in Chromium, against a production deployment', function () {
  this.timeout(120000);
  let stack: InProcessStack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let foreign: string[];
  const ada = { phone: phone(), pushName: 'Ada Admin' };
  const bruno = { phone: phone(), pushName: 'Bruno Costa' };
  let brunoLogin: Awaited<ReturnType<typeof appLogin>>;

  before(async function () {
    chromiumOrSkip(this);
    [stack, browser] = await Promise.all([
      startStack({
        inProcess: true,
        name: 'console',
        webs: 1,
        workers: 1,
        env: { ...PRODUCTION_ENV, WHATSAPP_NUMBER: '+1 555 123 4567', ADMIN_USER, ADMIN_PASSWORD },
      }),
      launch(),
    ]);
    context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.url });
    page = await context.newPage();
    problems = watchProblems(page);
    foreign = watchForeignRequests(page, [stack.url]);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it("serves /admin with the pages' policy: this origin only, never in a frame; /admin/queues stays Bull Board behind basic auth", async function () {
    const res = await request(stack.url, 'GET', '/admin', { headers: { 'accept-language': 'es-ES,es;q=0.9' } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const csp = res.headers.get('content-security-policy') ?? '';
    for (const d of ["default-src 'self'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "object-src 'none'"]) expect(csp).to.include(d);
    expect(csp).to.not.match(/script-src[^;]*unsafe-inline/);
    expect(res.headers.get('x-frame-options')).to.equal('DENY');
    expect(res.text).to.include('<html lang="es">').and.include('Consola del operador');
    for (const asset of ['/admin/console/console.js', '/admin/console/console.css'])
      expect((await request(stack.url, 'GET', asset)).status, asset).to.equal(200);
    expect((await request(stack.url, 'GET', '/admin/console/other.js')).status).to.equal(404);
    // the queue dashboard and metrics are where they were, behind the operator password
    expect((await request(stack.url, 'GET', '/admin/queues')).status).to.equal(401);
    const basic = `Basic ${Buffer.from(`${ADMIN_USER}:${ADMIN_PASSWORD}`).toString('base64')}`;
    const board = await request(stack.url, 'GET', '/admin/queues', { headers: { authorization: basic } });
    expect(board.status).to.equal(200);
    expect(board.text).to.match(/<html/i);
    expect((await request(stack.url, 'GET', '/metrics', { headers: { authorization: basic } })).status).to.equal(200);

    // a page of another origin can't frame it: Chromium refuses, and says why
    const framer = await context.newPage();
    const refused = framer.waitForEvent('console', (m) => /frame-ancestors/.test(m.text()));
    await framer.setContent(`<iframe src="${stack.url}/admin" title="framed"></iframe>`);
    expect((await refused).text()).to.include("frame-ancestors 'none'");
    await framer.close();
  });

  it('signs in through the chat; a person without the admin role is told so; granted the role, the console opens', async function () {
    await page.goto(`${stack.url}/admin`);
    expect(await page.getAttribute('html', 'lang')).to.equal('en');
    expect(await page.textContent('h1')).to.equal('Operator console');
    expect(await page.textContent('#number')).to.equal('Our WhatsApp number: +15551234567');
    const shown = await code(page);
    expect([...new Intl.Segmenter().segment(shown)].length).to.be.at.least(4);
    expect(await page.getAttribute('#wa', 'href')).to.equal(`https://wa.me/15551234567?text=${encodeURIComponent(`PIN: ${shown}`)}`);
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('console-1-sign-in') });

    await signIn(page, stack.url, ada);
    await view(page, 'forbidden');
    expect(await page.textContent('#forbidden-title')).to.equal('Not an admin');
    expect(await page.textContent('#forbidden-text')).to.match(/^Ada is signed in but does not have the admin role/);
    expect(await focused(page)).to.equal('forbidden-title');
    const session = await sessionOf(page);
    expect((await get(stack.url, `${API}/me`, session!.token)).status, 'the API agrees').to.equal(403);
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('console-2-not-an-admin') });

    // the first admin is made on the command line (npm run accounts -- grant-admin), by their phone as typed
    await grantAdmin(stack.prefix, spaced(ada.phone));
    await page.keyboard.press('Tab'); // from the heading to "Check again"
    expect(await focused(page)).to.equal('recheck');
    await page.keyboard.press('Enter');
    await view(page, 'app');
    expect(await page.textContent('#who')).to.equal('Signed in as Ada');
    expect(await page.getAttribute('a[href="/admin/queues"]', 'href')).to.equal('/admin/queues');
    expect(await page.getAttribute('a[href="/metrics"]', 'href')).to.equal('/metrics');
    // no query: the newest accounts, Ada's among them
    await page.waitForSelector(`#results tr[data-user="${session!.user.id}"]`);
    expect(await axeViolations(page)).to.deep.equal([]);
  });

  it('people: finds a person by their phone as typed, shows identifiers, roles, sessions and events', async function () {
    brunoLogin = await appLogin(stack.url, bruno);
    await page.focus('#q');
    await page.keyboard.type(spaced(bruno.phone));
    await page.keyboard.press('Enter');
    const row = `#results tr[data-user="${brunoLogin.user.id}"]`;
    await page.waitForSelector(row);
    expect(await page.$$eval('#results tbody tr', (rs) => rs.length)).to.equal(1);
    expect(await page.textContent(`${row} td:nth-child(2)`)).to.equal(bruno.phone);
    await page.focus(`${row} a`);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#person:not([hidden]) #person-facts dd');
    expect(await page.textContent('#person-title')).to.equal('Bruno Costa');
    expect(await focused(page)).to.equal('person-title');
    expect(page.url()).to.equal(`${stack.url}/admin#person/${brunoLogin.user.id}`);
    const identifiers = await page.$$eval('#identifiers tbody tr', (rs) => rs.map((r) => r.textContent ?? ''));
    expect(identifiers.some((i) => i.includes(bruno.phone.slice(1)))).to.equal(true);
    expect(await page.inputValue('#roles')).to.equal('user');
    expect(await page.$$eval('#sessions tbody tr', (rs) => rs.length)).to.equal(1);
    await page.waitForSelector('#person-events tbody tr');
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('console-3-person'), fullPage: true });
  });

  it('roles, sessions, block and unblock change the person, as the admin API says', async function () {
    const id = brunoLogin.user.id;
    const admin = (await sessionOf(page))!.token;
    await page.fill('#roles', 'user, admin');
    await page.click('#roles-form button[type=submit]');
    await page.waitForSelector('#notice:has-text("Roles saved")');
    expect((await get<{ user: { roles: string[] } }>(stack.url, `${API}/users/${id}`, admin)).body.user.roles).to.have.members(['user', 'admin']);
    await page.fill('#roles', 'user');
    await page.click('#roles-form button[type=submit]');
    await page.waitForSelector('#notice:has-text("Roles saved: user.")');

    await page.click('#sessions button[data-session]');
    await page.waitForSelector('#no-sessions:not([hidden])');
    expect((await get(stack.url, '/profile', brunoLogin.token)).status, 'the ended session is closed').to.equal(401);

    await page.fill('#block-reason', 'spam reports');
    await page.click('#block-form button[type=submit]');
    await page.waitForSelector('#block-state:not([hidden])');
    expect(await page.textContent('#block-state')).to.include('spam reports');
    expect(await focused(page)).to.equal('unblock');
    expect((await get<{ user: { blocked: boolean } }>(stack.url, `${API}/users/${id}`, admin)).body.user.blocked).to.equal(true);
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#block-form:not([hidden])');
    expect((await get<{ user: { blocked: boolean } }>(stack.url, `${API}/users/${id}`, admin)).body.user.blocked).to.equal(false);
  });

  it('erase asks for the name typed, then erases and shows the receipt', async function () {
    const id = brunoLogin.user.id;
    const admin = (await sessionOf(page))!.token;
    expect(await page.textContent('#erase-label')).to.equal('Type Bruno Costa to confirm');
    await page.fill('#erase-confirm', 'Bruno');
    expect(await page.getAttribute('#erase', 'aria-disabled')).to.equal('true');
    // a button that says it can't act yet (aria-disabled), yet stays in the tab order: pressed, it says why
    await page.focus('#erase');
    await page.keyboard.press('Enter');
    expect(await page.textContent('#problem')).to.equal('The confirmation does not match.');
    expect(await focused(page)).to.equal('erase-confirm');
    expect((await get(stack.url, `${API}/users/${id}`, admin)).status, 'nothing erased').to.equal(200);
    await page.fill('#erase-confirm', 'Bruno Costa');
    expect(await page.getAttribute('#erase', 'aria-disabled')).to.equal('false');
    await page.press('#erase-confirm', 'Enter');
    await page.waitForSelector('#notice:has-text("Erased")');
    expect(page.url()).to.equal(`${stack.url}/admin#people`);
    expect((await get(stack.url, `${API}/users/${id}`, admin)).status).to.equal(404);
    expect(await page.$(`#results tr[data-user="${id}"]`)).to.equal(null);
  });

  it('API keys: made with its scopes, the secret shown once and copied, then revoked', async function () {
    await page.click('#tab-keys');
    await page.waitForSelector('#keys:not([hidden])');
    expect(await focused(page)).to.equal('keys-title');
    await page.fill('#key-name', 'siem');
    await page.uncheck('#key-form input[value="users:read"]');
    await page.check('#key-form input[value="events:read"]');
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('#secret-box:not([hidden])');
    expect(await focused(page)).to.equal('secret-title');
    const secret = (await page.textContent('#secret'))!;
    expect(secret.length).to.be.above(20);
    await page.click('#copy');
    await page.waitForSelector('#notice:has-text("Copied.")');
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(secret);
    const row = page.locator('#key-list tbody tr', { hasText: 'siem' });
    expect(await row.locator('td:nth-child(2)').textContent()).to.equal('events:read');
    expect((await get(stack.url, `${API}/events`, secret)).status, 'the key reads events').to.equal(200);
    expect((await get(stack.url, `${API}/users`, secret)).status, 'and nothing else').to.equal(403);
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('console-4-keys'), fullPage: true });

    await row.locator('button').click();
    await page.waitForSelector('#notice:has-text("Key siem revoked.")');
    // listed a while longer, as revoked, with nothing left to press
    expect(await row.locator('button').count()).to.equal(0);
    expect(await row.locator('td:nth-child(5)').textContent()).to.match(/^Revoked /);
    expect((await get(stack.url, `${API}/events`, secret)).status, 'revoked').to.equal(401);
  });

  it('an access token the API refuses (expired) is refreshed once through /refresh-token, and the calls made again', async function () {
    await page.click('#tab-people');
    await page.waitForSelector('#people:not([hidden])');
    const before = (await sessionOf(page))!.token;
    let refused = 0;
    const refreshes: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/refresh-token') refreshes.push(r.method());
    });
    // the next two admin calls answer as an expired token does, both held until both have come (so they fail together)
    const held: (() => void)[] = [];
    await page.route(`${stack.url}${API}/**`, async (route) => {
      if (refused < 2 && route.request().headers().authorization === `Bearer ${before}`) {
        refused += 1;
        await new Promise<void>((resolve) => {
          held.push(resolve);
          if (held.length === 2) for (const go of held) go();
        });
        return route.fulfill({
          status: 401,
          contentType: 'application/json',
          body: JSON.stringify({ success: false, error: 'AUTHENTICATION_FAILED', message: 'Token expired' }),
        });
      }
      return route.continue();
    });
    const answered = (path: string) =>
      page.waitForResponse(
        (r) => new URL(r.url()).pathname === `${API}${path}` && r.status() === 200 && r.request().headers().authorization !== `Bearer ${before}`,
      );
    const again = Promise.all([answered('/users'), answered('/keys')]);
    // two calls at once, both refused: the search and the key list (read again whenever its tab is shown)
    await Promise.all([page.evaluate(() => document.querySelector<HTMLFormElement>('#search')!.requestSubmit()), page.click('#tab-keys')]);
    await again;
    await page.waitForSelector('#keys:not([hidden])');
    await page.unroute(`${stack.url}${API}/**`);
    expect(refused).to.equal(2);
    expect(refreshes, 'one refresh for every call that was refused').to.deep.equal(['POST']);
    const after = (await sessionOf(page))!.token;
    expect(after).to.not.equal(before);
    expect((await get(stack.url, `${API}/me`, after)).status).to.equal(200);
    expect(await page.getAttribute('#console', 'data-view')).to.equal('app');
  });

  it('follows the audit trail live: a sign-in shows up as it happens', async function () {
    await page.click('#tab-events');
    await page.selectOption('#ev-type', 'login.succeeded');
    await page.click('#follow');
    await page.waitForSelector('#console[data-stream="on"]');
    expect(await focused(page)).to.equal('unfollow');
    const carla = await appLogin(stack.url, { phone: phone(), pushName: 'Carla Dias' });
    await page.waitForSelector(`#live tr:has(a[href="#person/${carla.user.id}"])`);
    expect(await page.textContent(`#live tr:has(a[href="#person/${carla.user.id}"]) td:nth-child(2)`)).to.equal('login.succeeded');
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.click('#unfollow');
    await page.waitForSelector('#console[data-stream="off"]');
  });

  it('in Portuguese: an admin signing in again sees every screen in their language, with no axe findings; sign out ends the session', async function () {
    const pt = await browser.newContext({ locale: 'pt-BR', viewport: { width: 1280, height: 900 } });
    const p = await pt.newPage();
    const ptProblems = watchProblems(p);
    const ptForeign = watchForeignRequests(p, [stack.url]);
    await p.goto(`${stack.url}/admin`);
    expect(await p.getAttribute('html', 'lang')).to.equal('pt');
    expect(await p.textContent('h1')).to.equal('Console do operador');
    expect(await axeViolations(p)).to.deep.equal([]);
    await signIn(p, stack.url, ada);
    await view(p, 'app');
    expect(await p.textContent('#who')).to.equal('Você entrou como Ada');
    await p.waitForSelector('#results tbody tr');
    expect(await axeViolations(p)).to.deep.equal([]);
    await p.click('#results tbody tr a');
    await p.waitForSelector('#person:not([hidden]) #person-facts dd');
    expect(await axeViolations(p)).to.deep.equal([]);
    for (const tab of ['keys', 'events']) {
      await p.click(`#tab-${tab}`);
      await p.waitForSelector(`#${tab}:not([hidden])`);
      expect(await axeViolations(p), tab).to.deep.equal([]);
    }
    await p.screenshot({ path: shot('console-5-pt') });
    const token = (await sessionOf(p))!.token;
    await p.click('#app button.signout');
    await view(p, 'signin');
    await p.waitForSelector('#console[data-status="waiting"]');
    expect(await sessionOf(p)).to.equal(null);
    expect((await get(stack.url, `${API}/me`, token)).status, 'signed out: the token is closed').to.equal(401);
    expect(ptProblems).to.deep.equal([]);
    expect(ptForeign).to.deep.equal([]);
    await pt.close();
  });

  it('made no request outside its origin and had no errors', function () {
    expect(foreign).to.deep.equal([]);
    expect(problems).to.deep.equal([]);
  });
});
