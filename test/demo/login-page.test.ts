import http from 'node:http';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { renderLoginPage } from '../../src/demo/page.js';
import { EMOJI_ALPHABET } from '../../src/registrations/emoji-alphabet.js';
import { randomPhone } from '../helpers/flow.js';
import { request } from '../helpers/http.js';
import { evolutionChat, PRODUCTION_ENV } from '../helpers/production.js';
import { ROOT, startStack, type InProcessStack } from '../helpers/processes.js';
import { axeViolations, emojiPixels, chromiumOrSkip, launch, shot, watchForeignRequests, watchProblems, type EmojiPixels } from './browser.js';

/** Contrast ratio of an element's text against its background (WCAG formula), computed in the page. */
async function contrast(page: Page, selector: string): Promise<number> {
  return page.$eval(selector, (el) => {
    const rgb = (c: string): number[] => (c.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
    const lum = ([r, g, b]: number[]): number => {
      const f = (v: number): number => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
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
    http
      .get(url, { headers: { 'accept-encoding': acceptEncoding } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * Each emoji of the code painted in colour from its picture: some of its box in colour (a
 * black-and-white outline has none; Twemoji's least colourful, ⚽ and 🐼, have a few per cent) and
 * a good part of it inked (a picture that did not load leaves the box blank).
 */
function expectColour(pixels: EmojiPixels[], code: string): void {
  expect(pixels.map((p) => p.emoji).join(''), 'one picture per emoji').to.equal(code);
  for (const p of pixels) {
    expect(p.coloured, `${p.emoji} in colour`).to.be.above(0.01);
    expect(p.inked, `${p.emoji} drawn`).to.be.above(0.2);
  }
}

/** The text a person selecting the code gets (what a copy puts on the clipboard as text). */
const selectedCode = (page: Page): Promise<string> =>
  page.evaluate(() => {
    const range = document.createRange();
    range.selectNodeContents(document.getElementById('emoji')!);
    const sel = getSelection()!;
    sel.removeAllRanges();
    sel.addRange(range);
    const text = sel.toString();
    sel.removeAllRanges();
    return text;
  });

/** Left edges, in CSS pixels: of each element's box, or with `text:` of its first line of text. */
const lefts = (page: Page, selectors: string[]): Promise<number[]> =>
  page.evaluate(
    (sels) =>
      sels.map((s) => {
        const text = s.startsWith('text:');
        const el = document.querySelector(text ? s.slice(5) : s)!;
        if (!text) return Math.round(el.getBoundingClientRect().left);
        const range = document.createRange();
        range.selectNodeContents(el);
        return Math.round(range.getClientRects()[0]!.left);
      }),
    selectors,
  );

const top = async (page: Page, sel: string): Promise<number> => (await page.locator(sel).boundingBox())!.y;

const ADMIN_USER = 'ops';
const ADMIN_PASSWORD = 'correct horse battery staple, twice as long';
const PIN_TTL = 15;

describe('demo: the login page at / in Chromium, against a production deployment', function () {
  this.timeout(120000);
  let stack: InProcessStack;
  let browser: Browser;
  let expired: Promise<void>;

  before(async function () {
    chromiumOrSkip(this);
    // started as docs/operations.md says: a web node and a worker from the Procfile lines, production defaults
    [stack, browser] = await Promise.all([
      startStack({
        inProcess: true,
        name: 'page',
        webs: 1,
        workers: 1,
        defaultLimits: true,
        env: { ...PRODUCTION_ENV, WHATSAPP_NUMBER: '+1 555 123 4567', PIN_TTL_SECONDS: String(PIN_TTL), ADMIN_USER, ADMIN_PASSWORD },
      }),
      launch(),
    ]);
    expired = expireAndRenew();
    expired.catch(() => undefined); // its test awaits it and reports a failure
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  /**
   * A page left open until its code expires: started in `before`, so that the PIN lifetime runs
   * out while the other tests run; its test (the last) awaits it.
   */
  async function expireAndRenew(): Promise<void> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems = watchProblems(page);
    await page.goto(`${stack.url}/`);
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
  }

  it('desktop: shows the code the server drew, its QR code, link and countdown; an Evolution webhook signs the person in', async function () {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems = watchProblems(page);
    const foreign = watchForeignRequests(page, [stack.url]);
    await page.goto(`${stack.url}/`);
    await waitStatus(page, 'waiting');
    expect(await page.getAttribute('html', 'lang')).to.equal('en');
    const code = await codeOf(page);
    expectServerDrawn(code);
    expectColour(await emojiPixels(page), code);
    expect(await selectedCode(page), 'the code stays text').to.equal(code);
    const text = `PIN: ${code}`;
    expect(await page.getAttribute('#wa', 'href')).to.equal(`https://wa.me/15551234567?text=${encodeURIComponent(text)}`);
    expect(await page.getAttribute('#qr', 'src')).to.match(/^data:image\/svg\+xml/);
    for (const sel of ['#qr', '#wa', '#countdown', '#number']) expect(await page.isVisible(sel), sel).to.equal(true);
    expect(await page.textContent('#number')).to.equal('Our WhatsApp number: +15551234567');
    // wide screen: the code first, then how to send it; the QR hint, not the phone's
    expect(await top(page, '#emoji')).to.be.below(await top(page, '#wa'));
    expect(await page.isVisible('.hint .wide-only')).to.equal(true);
    expect(await page.isVisible('.hint .phone-only')).to.equal(false);
    // no developer links for the person signing in: the page's only links are its buttons
    expect(await page.$$eval('a', (as) => as.map((a) => a.id))).to.deep.equal(['wa', 'back']);
    expect(await page.textContent('body')).to.not.match(/API reference/);
    // one left edge for the heading, the code and its controls, the header's name and the footer
    const edge = (await lefts(page, ['h1']))[0]!;
    expect(await lefts(page, ['#login-title', '#emoji', '#wa', '#status', '.brand-name', 'text:.foot'])).to.deep.equal(Array(6).fill(edge));
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
    // the details under the heading, on its left edge (not centred under a left-aligned heading)
    expect(await lefts(page, ['#profile-title', 'dl', 'dt', '#signout'])).to.deep.equal(Array(4).fill(edge));
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('2-signed-in') });

    await page.click('#signout');
    await waitStatus(page, 'waiting');
    expect(await codeOf(page)).to.not.equal(code);
    expectServerDrawn(await codeOf(page));
    expectColour(await emojiPixels(page), await codeOf(page));
    expect(problems).to.deep.equal([]);
    expect(foreign).to.deep.equal([]);
    await page.close();
  });

  it('every emoji the server draws is painted in colour from our own picture, with no emoji font on the machine', async function () {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const foreign = watchForeignRequests(page, [stack.url]);
    // the page as the server renders it (the OpenID interaction's markup), with the whole alphabet as its code,
    // on the service's origin so its styles and pictures come from the service; its script is kept out (it would poll)
    const all = EMOJI_ALPHABET.join('');
    const html = renderLoginPage({
      brand: { name: 'pin-auth' },
      flow: { kind: 'interaction', statusUrl: '/nowhere', emojiString: all, text: `PIN: ${all}`, waLink: 'https://wa.me/', expiresIn: 60 },
    });
    await page.route(`${stack.url}/alphabet`, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: html }));
    await page.route('**/demo/app.js', (route) => route.abort());
    await page.goto(`${stack.url}/alphabet`);
    await page.waitForFunction(() => [...document.querySelectorAll('#emoji .e')].length === 64);
    const pictures = await page.$$eval('#emoji .e', (es) => es.map((e) => getComputedStyle(e).backgroundImage));
    for (const [i, e] of EMOJI_ALPHABET.entries()) expect(pictures[i], e).to.equal(`url("${stack.url}/demo/emoji/${e.codePointAt(0)!.toString(16)}.svg")`);
    // every picture loaded (a painted box needs its image: wait for them all, as the browser fetches them in parallel)
    await page.waitForLoadState('networkidle');
    const pixels = await emojiPixels(page);
    expectColour(pixels, all);
    for (const cat of ['🐱', '🐭', '🐮', '🐵']) expect(pixels.find((p) => p.emoji === cat)!.coloured, cat).to.be.above(0.2);
    expect(await selectedCode(page)).to.equal(all);
    await page.screenshot({ path: shot('8-alphabet') });
    expect(foreign).to.deep.equal([]);
    await page.close();
  });

  it('mobile: no sideways scrolling, tap targets, keyboard order, contrast, no axe violations; signs in', async function () {
    const page = await browser.newPage({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const problems = watchProblems(page);
    await page.goto(`${stack.url}/`);
    await waitStatus(page, 'waiting');
    expectServerDrawn(await codeOf(page));
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(360);
    // a phone: the button first, no QR code (WhatsApp is on this phone), the number as text, all above the fold
    expect(await page.isVisible('#qr')).to.equal(false);
    expect(await page.isVisible('.hint .phone-only')).to.equal(true);
    expect(await page.isVisible('.hint .wide-only')).to.equal(false);
    expect(await top(page, '#wa')).to.be.below(await top(page, '#emoji'));
    expect(await page.textContent('#number')).to.equal('Our WhatsApp number: +15551234567');
    const status = (await page.locator('#status').boundingBox())!;
    expect(status.y + status.height, 'the status above the fold').to.be.at.most(740);
    expectColour(await emojiPixels(page), await codeOf(page));
    for (const sel of ['#emoji', '#wa', '#number', '#countdown']) {
      const box = (await page.locator(sel).boundingBox())!;
      expect(box.x, sel).to.be.at.least(0);
      expect(box.x + box.width, sel).to.be.at.most(360);
    }
    expect((await page.locator('#wa').boundingBox())!.height, 'tap target').to.be.at.least(44);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('wa');
    expect(await page.getAttribute('#wa', 'aria-label')).to.match(/Open WhatsApp with the message PIN: /);
    expect(await page.getAttribute('#countdown', 'role')).to.equal('timer');
    for (const sel of ['h1', '.hint', '#status', '#wa', '.countdown', '#number']) expect(await contrast(page, sel), sel).to.be.at.least(4.5);
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('4-phone'), fullPage: true });

    await evolutionChat(stack.url, `PIN: ${await codeOf(page)}`, { phone: randomPhone(), pushName: 'Bea' });
    await waitStatus(page, 'signed-in');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(360);
    await page.screenshot({ path: shot('5-phone-signed-in'), fullPage: true });
    expect(problems).to.deep.equal([]);
    await page.close();
  });

  it("in the person's language: Portuguese on a phone, Spanish on a desktop (Accept-Language), with the same contrast and axe checks", async function () {
    // Accept-Language picks the page; one we have no texts for gets the chat's language (CHAT_LANGUAGE, English here)
    for (const [header, lang] of [
      ['pt-BR,pt;q=0.9,en;q=0.8', 'pt'],
      ['es-ES', 'es'],
      ['de-DE, es;q=0.5', 'es'],
      ['fr', 'en'],
      ['*', 'en'],
      [undefined, 'en'],
    ] as const) {
      const r = await fetch(`${stack.url}/`, { headers: header ? { 'accept-language': header } : {} });
      expect(await r.text(), header).to.include(`<html lang="${lang}">`);
      expect(r.headers.get('vary'), header).to.match(/accept-language/i);
    }
    const cases = [
      {
        locale: 'pt-BR',
        lang: 'pt',
        viewport: { width: 360, height: 740 },
        isMobile: true,
        title: 'Entrar com o WhatsApp',
        waiting: 'Aguardando a sua mensagem…',
        number: 'Nosso número do WhatsApp: +15551234567',
        wa: /^Abrir o WhatsApp com a mensagem PIN: .* já escrita$/,
        signedIn: 'Você entrou como Ana Souza',
      },
      {
        locale: 'es-ES',
        lang: 'es',
        viewport: { width: 1280, height: 800 },
        isMobile: false,
        title: 'Iniciar sesión con WhatsApp',
        waiting: 'Esperando tu mensaje…',
        number: 'Nuestro número de WhatsApp: +15551234567',
        wa: /^Abrir WhatsApp con el mensaje PIN: .* ya escrito$/,
        signedIn: 'Sesión iniciada como Ana Souza',
      },
    ];
    for (const c of cases) {
      const context = await browser.newContext({
        locale: c.locale,
        viewport: c.viewport,
        isMobile: c.isMobile,
        hasTouch: c.isMobile,
        deviceScaleFactor: c.isMobile ? 2 : 1,
      });
      const page = await context.newPage();
      const problems = watchProblems(page);
      await page.goto(`${stack.url}/`);
      await waitStatus(page, 'waiting');
      expect(await page.getAttribute('html', 'lang')).to.equal(c.lang);
      expect(await page.textContent('h1')).to.equal(c.title);
      expect(await page.textContent('#status')).to.equal(c.waiting);
      expect(await page.textContent('#number')).to.equal(c.number);
      expect(await page.getAttribute('#wa', 'aria-label')).to.match(c.wa);
      expect(await page.isVisible('#qr'), 'a QR code on the desktop only').to.equal(!c.isMobile);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(c.viewport.width);
      for (const sel of ['h1', '.hint', '#status', '#wa', '.countdown', '#number']) expect(await contrast(page, sel), `${c.lang} ${sel}`).to.be.at.least(4.5);
      expect(await axeViolations(page)).to.deep.equal([]);
      await page.screenshot({ path: shot(`9-${c.lang}`), fullPage: true });
      await evolutionChat(stack.url, `PIN: ${await codeOf(page)}`, { phone: randomPhone(), pushName: 'Ana Souza' });
      await waitStatus(page, 'signed-in');
      expect(await page.textContent('#profile-title')).to.equal(c.signedIn);
      expect(await contrast(page, '#status')).to.be.at.least(4.5);
      expect(await axeViolations(page)).to.deep.equal([]);
      expect(problems).to.deep.equal([]);
      await context.close();
    }
  });

  it('no page we serve fetches a font, script, style or image from a third party: /, /docs, /admin/queues', async function () {
    // under a host name, as deployed (a page may behave otherwise on localhost)
    const hosted = await launch(['--host-resolver-rules=MAP pin-auth.test 127.0.0.1']);
    const origin = stack.url.replace('127.0.0.1', 'pin-auth.test');
    const context = await hosted.newContext({ viewport: { width: 1280, height: 800 }, httpCredentials: { username: ADMIN_USER, password: ADMIN_PASSWORD } });
    try {
      for (const [path, ready] of [
        ['/', '#app[data-status="waiting"]'],
        ['/docs', '.swagger-ui .info'],
        ['/admin/queues', 'text=inbound'],
      ] as const) {
        const page = await context.newPage();
        const problems = watchProblems(page);
        const foreign = watchForeignRequests(page, [origin]);
        const res = (await page.goto(origin + path))!;
        expect(res.status(), path).to.equal(200);
        if (path === '/admin/queues') {
          // the queue dashboard's page: Bull Board's Google Fonts link is gone, and its policy allows no other host
          expect(await res.text()).to.not.match(/fonts\.googleapis|<link[^>]+https?:/);
          expect(res.headers()['content-security-policy'])
            .to.match(/font-src 'self' data:/)
            .and.not.match(/https:/);
        }
        await page.waitForSelector(ready, { timeout: 20000 });
        await page.waitForLoadState('networkidle');
        expect(foreign, path).to.deep.equal([]);
        // plain http under a host name (production serves HTTPS): Chromium says it ignores the Cross-Origin-Opener-Policy
        expect(
          problems.filter((p) => !/Cross-Origin-Opener-Policy header has been ignored/.test(p)),
          path,
        ).to.deep.equal([]);
        await page.screenshot({ path: shot(`10-own-origin${path.replace(/\//g, '-')}`) });
        await page.close();
      }
    } finally {
      await hosted.close();
    }
  });

  it('assets: compressed forms (brotli, gzip) that decode to the file, content types, a favicon, the 64 emoji pictures', async function () {
    const get = (p: string, encoding?: string) => fetch(stack.url + p, { headers: encoding ? { 'accept-encoding': encoding } : {} });
    for (const [file, type] of [
      ['/demo/app.js', 'application/javascript'],
      ['/demo/style.css', 'text/css'],
      ['/demo/favicon.svg', 'image/svg+xml'],
      ['/', 'text/html'],
    ] as const) {
      const plain = await get(file, 'identity');
      expect(plain.status, file).to.equal(200);
      expect(plain.headers.get('content-type'), file).to.include(type);
      expect(plain.headers.get('content-encoding'), file).to.equal(null);
      const identity = Buffer.from(await plain.arrayBuffer());
      for (const [encoding, decode] of [
        ['br', brotliDecompressSync],
        ['gzip', gunzipSync],
      ] as const) {
        const r = await rawGet(stack.url + file, encoding);
        expect(r.headers['content-encoding'], `${file} ${encoding}`).to.equal(encoding);
        expect(r.headers.vary, file).to.match(/accept-encoding/i);
        const body = r.body;
        expect(body.length, `${file} ${encoding}`).to.be.below(identity.length);
        expect(decode(body).equals(identity), `${file} ${encoding}`).to.equal(true);
      }
    }
    // the code's emoji pictures: one for each emoji of the alphabet, nothing else of the package
    for (const e of EMOJI_ALPHABET) {
      const r = await get(`/demo/emoji/${e.codePointAt(0)!.toString(16)}.svg`);
      expect(r.status, e).to.equal(200);
      expect(r.headers.get('content-type'), e).to.equal('image/svg+xml');
      expect(await r.text(), e).to.match(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    }
    for (const other of ['1f600.svg', 'package.json', '..%2Fpackage.json', 'license']) expect((await get(`/demo/emoji/${other}`)).status, other).to.equal(404);
    const icon = await get('/favicon.ico');
    expect(icon.status).to.equal(200);
    expect(icon.headers.get('content-type')).to.equal('image/x-icon');
    expect(
      Buffer.from(await icon.arrayBuffer())
        .subarray(0, 4)
        .toString('hex'),
    ).to.equal('00000100'); // ICO header
  });

  it('awaiting confirmation, then a declined login (LOGIN_CONFIRMATION=on, the person answers NO)', async function () {
    const confirm = await startStack({
      inProcess: true,
      name: 'page-confirm',
      webs: 1,
      workers: 1,
      defaultLimits: true,
      env: { ...PRODUCTION_ENV, LOGIN_CONFIRMATION: 'on', WHATSAPP_NUMBER: '+15551234567' },
    });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
    try {
      // docs/login-page.png is this picture (this deployment keeps the default lifetime, 3:00)
      const desktop = await browser.newPage({ viewport: { width: 1120, height: 640 } });
      await desktop.goto(`${confirm.url}/`);
      await waitStatus(desktop, 'waiting');
      await desktop.screenshot({ path: shot('0-readme') });
      await desktop.close();

      await page.goto(`${confirm.url}/`);
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
    await page.route('**/app/pin-auth-client.js', (route) =>
      route.fulfill({ path: path.join(ROOT, 'packages/client/dist/pin-auth-client.js'), contentType: 'application/javascript' }),
    );
    await page.goto(`${stack.url}/`);
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
    const off = await startStack({ inProcess: true, name: 'page-off', webs: 1, workers: 0, env: { ...PRODUCTION_ENV, DEMO_PAGE: 'false' } });
    try {
      expect((await request(off.url, 'GET', '/')).status).to.equal(404);
      expect((await request(off.url, 'GET', '/demo/app.js')).status).to.equal(404);
      expect((await request(off.url, 'GET', '/docs')).status).to.equal(200);
    } finally {
      await off.stop();
    }
  });

  it('an expired code is replaced by a new one at once, never left on screen', async function () {
    // opened in `before`: its code's lifetime ran out while the tests above ran
    await expired;
  });
});
