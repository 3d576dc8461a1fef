import path from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { randomPhone, sendChat } from '../helpers/flow.js';
import { request } from '../helpers/http.js';
import { ROOT, startStack, type Stack } from '../helpers/processes.js';
import { ensureChromium, launch, shot } from './browser.js';

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

const status = (page: Page): Promise<string | null> => page.locator('#app').getAttribute('data-status');
const waitStatus = (page: Page, s: string, timeout = 15000): Promise<unknown> => page.waitForSelector(`#app[data-status="${s}"]`, { timeout });

describe('demo: the login page in a real browser (Debian Chromium)', function () {
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
    [stack, browser] = await Promise.all([
      startStack({ name: 'demo', webs: 1, workers: 1, env: { WHATSAPP_NUMBER: '+1 555 123 4567', PIN_TTL_SECONDS: '6' } }),
      launch(),
    ]);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('signs in end to end: code, QR and wa.me link, the webhook, then the profile and sign-out', async function () {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(stack.url + '/');
    await waitStatus(page, 'waiting');
    const emoji = (await page.textContent('#emoji'))!.trim();
    expect([...new Intl.Segmenter().segment(emoji)]).to.have.length(4);
    const text = `PIN: ${emoji}`;
    expect(await page.getAttribute('#wa', 'href')).to.equal(`https://wa.me/15551234567?text=${encodeURIComponent(text)}`);
    expect(await page.getAttribute('#qr', 'src')).to.match(/^data:image\/svg\+xml/);
    expect(await page.isVisible('#qr')).to.equal(true);
    expect(await page.textContent('#status')).to.match(/Waiting for your message/);
    await page.screenshot({ path: shot('1-waiting-desktop') });

    const hook = await sendChat(stack.url, text, { phone: randomPhone(), pushName: 'Ana Silva' });
    expect(hook.status).to.equal(200);
    await waitStatus(page, 'signed-in');
    await page.waitForSelector('#profile:not([hidden])');
    expect(await page.textContent('#who')).to.equal('Ana Silva');
    expect(await page.textContent('#p-roles')).to.equal('user');
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('profile-title');
    await page.screenshot({ path: shot('2-signed-in') });

    await page.click('#signout');
    await waitStatus(page, 'waiting');
    expect((await page.textContent('#emoji'))!.trim()).to.not.equal(emoji);
    expect(errors).to.deep.equal([]);
    await page.close();
  });

  it('shows expiry, and a new code is one key press away', async function () {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(stack.url + '/');
    await waitStatus(page, 'waiting');
    const first = await page.textContent('#emoji');
    await waitStatus(page, 'expired', 20000);
    expect(await page.textContent('#status')).to.match(/expired/i);
    expect(await page.isVisible('#qr')).to.equal(false);
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('restart');
    expect(await contrast(page, '#status')).to.be.at.least(4.5);
    await page.screenshot({ path: shot('3-expired') });
    await page.keyboard.press('Enter');
    await waitStatus(page, 'waiting');
    expect(await page.textContent('#emoji')).to.not.equal(first);
    await page.close();
  });

  it('works on a phone-sized screen: no sideways scrolling, everything reachable by keyboard, readable', async function () {
    const page = await browser.newPage({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    await page.goto(stack.url + '/');
    await waitStatus(page, 'waiting');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(360);
    for (const sel of ['#emoji', '#qr', '#wa']) {
      const box = (await page.locator(sel).boundingBox())!;
      expect(box.x, sel).to.be.at.least(0);
      expect(box.x + box.width, sel).to.be.at.most(360);
    }
    const wa = (await page.locator('#wa').boundingBox())!;
    expect(wa.height, 'tap target').to.be.at.least(44);
    // keyboard: Tab reaches the WhatsApp link first, and it has a name that says what it does
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('wa');
    expect(await page.getAttribute('#wa', 'aria-label')).to.match(/Open WhatsApp with the message PIN: /);
    expect(await page.getAttribute('#qr', 'alt')).to.match(/QR code/);
    expect(await page.getAttribute('#status', 'role')).to.equal('status');
    for (const sel of ['h1', '.hint', '#status', '#wa']) expect(await contrast(page, sel), sel).to.be.at.least(4.5);
    await page.screenshot({ path: shot('4-phone'), fullPage: true });

    const text = `PIN: ${(await page.textContent('#emoji'))!.trim()}`;
    await sendChat(stack.url, text, { phone: randomPhone(), pushName: 'Bea' });
    await waitStatus(page, 'signed-in');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(360);
    await page.screenshot({ path: shot('5-phone-signed-in'), fullPage: true });
    await page.close();
  });

  it('shows awaiting confirmation, then a denied login (LOGIN_CONFIRMATION=on, the person answers NO)', async function () {
    const confirm = await startStack({ name: 'demo-confirm', webs: 1, workers: 1, env: { LOGIN_CONFIRMATION: 'on' } });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
    try {
      await page.goto(confirm.url + '/');
      await waitStatus(page, 'waiting');
      const phone = randomPhone();
      await sendChat(confirm.url, `PIN: ${(await page.textContent('#emoji'))!.trim()}`, { phone });
      await waitStatus(page, 'awaiting-confirmation');
      expect(await page.textContent('#status')).to.match(/confirm the login in WhatsApp/);
      await page.screenshot({ path: shot('6-awaiting-confirmation') });
      await sendChat(confirm.url, 'NO', { phone });
      await waitStatus(page, 'denied');
      expect(await page.textContent('#status')).to.match(/declined/);
      expect(await page.evaluate(() => document.activeElement?.id)).to.equal('restart');
      expect(await contrast(page, '#status')).to.be.at.least(4.5);
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
    await sendChat(stack.url, text, { phone: randomPhone(), pushName: 'Caio Souza' });
    expect(await page.evaluate(() => (window as unknown as { pending: Promise<unknown> }).pending)).to.equal('Caio');
    await page.close();
  });

  it('DEMO_PAGE=false turns the page off', async function () {
    const off = await startStack({ name: 'demo-off', webs: 1, workers: 0, env: { DEMO_PAGE: 'false' } });
    try {
      expect((await request(off.url, 'GET', '/')).status).to.equal(404);
      expect((await request(off.url, 'GET', '/demo/app.js')).status).to.equal(404);
      expect((await request(off.url, 'GET', '/docs')).status).to.equal(200);
    } finally {
      await off.stop();
    }
  });
});
