import http from 'node:http';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { EMOJI_ALPHABET } from '../../src/registrations/emoji-alphabet.js';
import { randomPhone } from '../helpers/flow.js';
import { request } from '../helpers/http.js';
import { evolutionChat, PRODUCTION_ENV } from '../helpers/production.js';
import { ROOT, startStack, type Stack } from '../helpers/processes.js';
import { axeViolations, ensureChromium, launch, shot, watchProblems } from './browser.js';

/** Contrast ratio of an element's text against its background (WCAG formula), computed in the page. */
async function contrast(page: Page, selector: string): Promise<number> {
  return page.$eval(selector, (el) => {
    const rgb = (c: string): number[] => (c.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
    const lum = ([r, g, b]: number[]): number => {
      const f = (v: number): number => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r!) + 0.7152 * f(g!) + 0.0722 * f(b!);
    };
    let bgEl: Element | null = el;
    let bg = 'rgb(255, 255, 255)';
    while (bgEl) {
      const c = getComputedStyle(bgEl).backgroundColor;
      if (c && c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') {
        bg = c;
        break;
      }
      bgEl = bgEl.parentElement;
    }
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(rgb(bg))];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  });
}

const waitStatus = (page: Page, s: string, timeout = 20000): Promise<unknown> => page.waitForSelector(`#app[data-status="${s}"]`, { timeout });
const codeOf = async (page: Page): Promise<string> => (await page.textContent('#emoji'))!.trim();
const clusters = (s: string): string[] => [...new Intl.Segmenter().segment(s)].map((x) => x.segment);
/** m:ss on the page, in seconds */
const countdown = async (page: Page): Promise<number> => {
  const [m, s] = (await page.textContent('#countdown'))!.split(':').map(Number);
  return m! * 60 + s!;
};

/** The page's code is one the server drew: every emoji from its alphabet (the page sends none of its own). */
function expectServerDrawn(code: string): void {
  expect(clusters(code).length, code).to.be.at.least(4);
  for (const c of clusters(code)) expect(EMOJI_ALPHABET, `${c} of ${code}`).to.include(c);
}

/** A GET whose body is read as sent (fetch would decode it). */
function rawGet(url: string, acceptEncoding: string): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers: { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const PIN_TTL = 15;

describe('demo: the login page at / in Chromium, against a production deployment', function () {
  this.timeout(120000);
  let stack: Stack;
  let browser: Browser;

  before(async function () {
    this.timeout(900000); // a first run may install Chromium with apt-get
    const missing = ensureChromium();
    if (missing) {
      console.warn(`skipping browser tests: ${missing}`);
      this.skip();
    }
    // started as docs/operations.md says: a web node and a worker from the Procfile lines, production defaults
    [stack, browser] = await Promise.all([
      startStack({ name: 'page', webs: 1, workers: 1, defaultLimits: true, env: { ...PRODUCTION_ENV, WHATSAPP_NUMBER: '+1 555 123 4567', PIN_TTL_SECONDS: String(PIN_TTL) } }),
      launch(),
    ]);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('desktop: shows the code the server drew, its QR code, link and countdown; an Evolution webhook signs the person in', async function () {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems = watchProblems(page);
    await page.goto(stack.url + '/');
    await waitStatus(page, 'waiting');
    const code = await codeOf(page);
    expectServerDrawn(code);
    const text = `PIN: ${code}`;
    expect(await page.getAttribute('#wa', 'href')).to.equal(`https://wa.me/15551234567?text=${encodeURIComponent(text)}`);
    expect(await page.getAttribute('#qr', 'src')).to.match(/^data:image\/svg\+xml/);
    for (const sel of ['#qr', '#wa', '#countdown']) expect(await page.isVisible(sel), sel).to.equal(true);
    expect(await countdown(page)).to.be.within(1, PIN_TTL);
    expect(await page.textContent('#status')).to.match(/Waiting for your message/);
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('1-waiting-desktop') });

    const hook = await evolutionChat(stack.url, text, { phone: randomPhone(), pushName: 'Ana Silva' });
    expect(hook.status, hook.text).to.equal(200);
    await waitStatus(page, 'signed-in');
    await page.waitForSelector('#profile:not([hidden])');
    expect(await page.textContent('#who')).to.equal('Ana Silva');
    expect(await page.textContent('#p-roles')).to.equal('user');
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('profile-title');
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('2-signed-in') });

    await page.click('#signout');
    await waitStatus(page, 'waiting');
    expect(await codeOf(page)).to.not.equal(code);
    expectServerDrawn(await codeOf(page));
    expect(problems).to.deep.equal([]);
    await page.close();
  });

  it('an expired code is replaced by a new one at once, never left on screen', async function () {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems = watchProblems(page);
    await page.goto(stack.url + '/');
    await waitStatus(page, 'waiting');
    const first = await codeOf(page);
    // the countdown runs
    const left = await countdown(page);
    await page.waitForFunction((was) => {
      const [m, s] = document.getElementById('countdown')!.textContent!.split(':').map(Number);
      return m! * 60 + s! < was;
    }, left);
    await page.waitForSelector('#app[data-codes="2"][data-status="waiting"]', { timeout: (PIN_TTL + 20) * 1000 });
    const second = await codeOf(page);
    expect(second).to.not.equal(first);
    expectServerDrawn(second);
    expect(await page.textContent('#status')).to.match(/expired; this is a new one/);
    expect(await countdown(page)).to.be.within(PIN_TTL - 5, PIN_TTL);
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('3-renewed') });
    // the new code works
    await evolutionChat(stack.url, `PIN: ${second}`, { phone: randomPhone(), pushName: 'Rui' });
    await waitStatus(page, 'signed-in');
    expect(problems).to.deep.equal([]);
    await page.close();
  });

  it('mobile: no sideways scrolling, tap targets, keyboard order, contrast, no axe violations; signs in', async function () {
    const page = await browser.newPage({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const problems = watchProblems(page);
    await page.goto(stack.url + '/');
    await waitStatus(page, 'waiting');
    expectServerDrawn(await codeOf(page));
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(360);
    for (const sel of ['#emoji', '#qr', '#wa', '#countdown']) {
      const box = (await page.locator(sel).boundingBox())!;
      expect(box.x, sel).to.be.at.least(0);
      expect(box.x + box.width, sel).to.be.at.most(360);
    }
    expect((await page.locator('#wa').boundingBox())!.height, 'tap target').to.be.at.least(44);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('wa');
    expect(await page.getAttribute('#wa', 'aria-label')).to.match(/Open WhatsApp with the message PIN: /);
    expect(await page.getAttribute('#countdown', 'role')).to.equal('timer');
    for (const sel of ['h1', '.hint', '#status', '#wa', '.countdown']) expect(await contrast(page, sel), sel).to.be.at.least(4.5);
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('4-phone'), fullPage: true });

    await evolutionChat(stack.url, `PIN: ${await codeOf(page)}`, { phone: randomPhone(), pushName: 'Bea' });
    await waitStatus(page, 'signed-in');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(360);
    await page.screenshot({ path: shot('5-phone-signed-in'), fullPage: true });
    expect(problems).to.deep.equal([]);
    await page.close();
  });

  it('assets: compressed forms (brotli, gzip) that decode to the file, content types, a favicon', async function () {
    const get = (p: string, encoding?: string) => fetch(stack.url + p, { headers: encoding ? { 'accept-encoding': encoding } : {} });
    for (const [file, type] of [['/demo/app.js', 'application/javascript'], ['/demo/style.css', 'text/css'], ['/demo/favicon.svg', 'image/svg+xml'], ['/', 'text/html']] as const) {
      const plain = await get(file, 'identity');
      expect(plain.status, file).to.equal(200);
      expect(plain.headers.get('content-type'), file).to.include(type);
      expect(plain.headers.get('content-encoding'), file).to.equal(null);
      const identity = Buffer.from(await plain.arrayBuffer());
      for (const [encoding, decode] of [['br', brotliDecompressSync], ['gzip', gunzipSync]] as const) {
        const r = await rawGet(stack.url + file, encoding);
        expect(r.headers['content-encoding'], `${file} ${encoding}`).to.equal(encoding);
        expect(r.headers['vary'], file).to.match(/accept-encoding/i);
        const body = r.body;
        expect(body.length, `${file} ${encoding}`).to.be.below(identity.length);
        expect(decode(body).equals(identity), `${file} ${encoding}`).to.equal(true);
      }
    }
    const icon = await get('/favicon.ico');
    expect(icon.status).to.equal(200);
    expect(icon.headers.get('content-type')).to.equal('image/x-icon');
    expect(Buffer.from(await icon.arrayBuffer()).subarray(0, 4).toString('hex')).to.equal('00000100'); // ICO header
  });

  it('awaiting confirmation, then a declined login (LOGIN_CONFIRMATION=on, the person answers NO)', async function () {
    const confirm = await startStack({ name: 'page-confirm', webs: 1, workers: 1, defaultLimits: true, env: { ...PRODUCTION_ENV, LOGIN_CONFIRMATION: 'on' } });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
    try {
      // docs/login-page.png is this picture (this deployment keeps the default lifetime, 3:00)
      const desktop = await browser.newPage({ viewport: { width: 1120, height: 640 } });
      await desktop.goto(confirm.url + '/');
      await waitStatus(desktop, 'waiting');
      await desktop.screenshot({ path: shot('0-readme') });
      await desktop.close();

      await page.goto(confirm.url + '/');
      await waitStatus(page, 'waiting');
      const phone = randomPhone();
      await evolutionChat(confirm.url, `PIN: ${await codeOf(page)}`, { phone });
      await waitStatus(page, 'awaiting-confirmation');
      expect(await page.textContent('#status')).to.match(/confirm the sign-in in WhatsApp/);
      expect(await axeViolations(page)).to.deep.equal([]);
      await page.screenshot({ path: shot('6-awaiting-confirmation') });
      await evolutionChat(confirm.url, 'NO', { phone });
      await waitStatus(page, 'denied');
      expect(await page.textContent('#status')).to.match(/declined/);
      expect(await page.evaluate(() => document.activeElement?.id)).to.equal('restart');
      expect(await contrast(page, '#status')).to.be.at.least(4.5);
      expect(await codeOf(page)).to.equal('…');
      expect(await axeViolations(page)).to.deep.equal([]);
      await page.screenshot({ path: shot('7-denied') });
    } finally {
      await page.close();
      await confirm.stop();
    }
  });

  it("the client's browser bundle (packages/client/dist/pin-auth-client.js) signs in from a page", async function () {
    const page = await browser.newPage();
    // served as if the app hosting it were on the service's origin
    await page.route('**/app/pin-auth-client.js', (route) => route.fulfill({ path: path.join(ROOT, 'packages/client/dist/pin-auth-client.js'), contentType: 'application/javascript' }));
    await page.goto(stack.url + '/');
    const text = await page.evaluate(async () => {
      const { PinAuthClient } = (await import('/app/pin-auth-client.js' as string)) as typeof import('@pin-auth/client');
      const client = new PinAuthClient({ baseUrl: location.origin });
      const login = await client.startLogin();
      (window as unknown as { pending: Promise<unknown> }).pending = login.session.then((s) => s.user.name);
      return login.text;
    });
    await evolutionChat(stack.url, text, { phone: randomPhone(), pushName: 'Caio Souza' });
    expect(await page.evaluate(() => (window as unknown as { pending: Promise<unknown> }).pending)).to.equal('Caio');
    await page.close();
  });

  it('DEMO_PAGE=false turns the page off (and its assets, with no OpenID client to serve them for)', async function () {
    const off = await startStack({ name: 'page-off', webs: 1, workers: 0, env: { ...PRODUCTION_ENV, DEMO_PAGE: 'false' } });
    try {
      expect((await request(off.url, 'GET', '/')).status).to.equal(404);
      expect((await request(off.url, 'GET', '/demo/app.js')).status).to.equal(404);
      expect((await request(off.url, 'GET', '/docs')).status).to.equal(200);
    } finally {
      await off.stop();
    }
  });
});
