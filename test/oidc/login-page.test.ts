import http from 'node:http';
import { expect } from 'chai';
import * as oidc from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, emojiPixels, chromiumOrSkip, launch, shot, watchForeignRequests, watchProblems } from '../demo/browser.js';
import { randomPhone } from '../helpers/flow.js';
import { evolutionChat, PRODUCTION_ENV } from '../helpers/production.js';
import { freePort, startStack, type InProcessStack } from '../helpers/processes.js';

const BRANDED = {
  client_id: 'shop',
  client_secret: 'shop-app-secret-0123456789abcdef0123',
  client_name: 'Corner Shop',
  brand_color: '#ffcc00',
  brand_background_color: '#1d1d3a',
};
const PLAIN = { client_id: 'plain', client_secret: 'plain-app-secret-0123456789abcdef012' };

/** The app (relying party): its callback page and its logo, on loopback. */
async function startApp(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/logo.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      res.end('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="5" fill="#ffcc00"/></svg>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Corner Shop</title><main><h1>Back in the app</h1></main></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const PIN_TTL = 20;
const waitStatus = (page: Page, s: string, timeout = 20000): Promise<unknown> => page.waitForSelector(`#app[data-status="${s}"]`, { timeout });

/**
 * The OpenID login step is the same page as `/` (src/demo/page.ts), branded for the client that
 * asks: driven in Chromium against a production deployment, with openid-client as the app.
 */
describe('oidc: the login page of an OpenID sign-in, in Chromium, production settings', function () {
  this.timeout(120000);
  let stack: InProcessStack;
  let browser: Browser;
  let app: { url: string; close(): Promise<void> };
  let issuer: string;
  let callback: string;
  let expiry: ReturnType<typeof watchExpiry>;

  before(async function () {
    chromiumOrSkip(this);
    app = await startApp();
    callback = `${app.url}/callback`;
    const port = await freePort();
    issuer = `http://localhost:${port}/oidc`;
    const clients = [
      { ...BRANDED, logo_uri: `${app.url}/logo.svg`, redirect_uris: [callback], post_logout_redirect_uris: [`${app.url}/signed-out`] },
      { ...PLAIN, redirect_uris: [callback] },
    ];
    [stack, browser] = await Promise.all([
      startStack({
        inProcess: true,
        name: 'oidc-page',
        webs: 1,
        workers: 1,
        defaultLimits: true,
        env: {
          ...PRODUCTION_ENV,
          PIN_TTL_SECONDS: String(PIN_TTL),
          PORT: String(port),
          OIDC_ISSUER: issuer,
          OIDC_CLIENTS: JSON.stringify(clients),
          WHATSAPP_NUMBER: '+15551234567',
        },
      }),
      launch(),
    ]);
    expiry = watchExpiry();
    expiry.catch(() => undefined); // its test awaits it and reports a failure
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
    await app?.close();
  });

  /**
   * A sign-in page left open until its code expires, then renewed: started in `before` so that the
   * PIN lifetime runs out while the other tests run (its test, the last, awaits what it saw).
   */
  async function watchExpiry(): Promise<{ first: string; second: string; interaction: string; url: string; problems: string[] }> {
    const { url } = await authorize(PLAIN);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      const problems = watchProblems(page);
      await page.goto(url.href);
      await waitStatus(page, 'waiting');
      const first = (await page.textContent('#emoji'))!.trim();
      const interaction = page.url();
      await page.waitForEvent('framenavigated', { timeout: (PIN_TTL + 40) * 1000 });
      await waitStatus(page, 'waiting');
      return { first, interaction, url: page.url(), second: (await page.textContent('#emoji'))!.trim(), problems };
    } finally {
      await page.close();
    }
  }

  /** An app's authorization request (code + PKCE), as openid-client builds it. */
  async function authorize(client: { client_id: string; client_secret: string }) {
    // a local http issuer: openid-client refuses plain http unless told (docs/oidc.md)
    const config = await oidc.discovery(new URL(issuer), client.client_id, client.client_secret, undefined, { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: callback,
      scope: 'openid profile phone',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    return { config, url, verifier, state };
  }

  it('desktop: the branded page (name, logo, colours) with the same components; the chat message signs the app in', async function () {
    const { config, url, verifier, state } = await authorize(BRANDED);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems = watchProblems(page);
    // the service and the app (its logo, its callback): nothing from anyone else
    const foreign = watchForeignRequests(page, [new URL(issuer).origin, app.url]);
    await page.goto(url.href);
    await waitStatus(page, 'waiting');
    expect(page.url()).to.match(/\/oidc\/interaction\/[^/]+$/);
    expect(await page.getAttribute('html', 'lang')).to.equal('en');
    expect(await page.textContent('#number')).to.equal('Our WhatsApp number: +15551234567');
    // the same components as /
    for (const sel of ['#emoji', '#qr', '#wa', '#countdown', '#status']) expect(await page.isVisible(sel), sel).to.equal(true);
    const code = (await page.textContent('#emoji'))!.trim();
    // the code's emoji in colour, from the service's pictures
    for (const p of await emojiPixels(page)) expect(p.coloured, p.emoji).to.be.above(0.01);
    expect(await page.getAttribute('#wa', 'href')).to.equal(`https://wa.me/15551234567?text=${encodeURIComponent(`PIN: ${code}`)}`);
    const [m, s] = (await page.textContent('#countdown'))!.split(':').map(Number);
    expect(m! * 60 + s!).to.be.within(1, PIN_TTL);
    // branded for the client
    expect(await page.textContent('h1')).to.equal('Sign in to Corner Shop with WhatsApp');
    expect(await page.textContent('.brand-name')).to.equal('Corner Shop');
    expect(await page.$eval('.brand .logo', (img) => (img as HTMLImageElement).naturalWidth)).to.be.above(0); // the CSP lets the logo in
    const colours = await page.evaluate(() => ({
      bg: getComputedStyle(document.body).backgroundColor,
      button: getComputedStyle(document.getElementById('wa')!).backgroundColor,
    }));
    expect(colours).to.deep.equal({ bg: 'rgb(29, 29, 58)', button: 'rgb(255, 204, 0)' });
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('oidc-1-branded') });

    await evolutionChat(stack.url, `PIN: ${code}`, { phone: randomPhone(), pushName: 'Ana Maria Silva' });
    await page.waitForURL((u) => u.href.startsWith(callback), { timeout: 20000 });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });
    const sub = tokens.claims()!.sub;
    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub);
    expect(info).to.include({ sub, name: 'Ana Maria Silva', phone_number_verified: true });

    // signing out asks in the same look, branded for the app
    await page.goto(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: `${app.url}/signed-out` }).href);
    expect(await page.textContent('h1')).to.equal('Sign out?');
    expect(await page.textContent('.brand-name')).to.equal('Corner Shop');
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('oidc-3-sign-out') });
    await page.click('button[name="logout"]');
    await page.waitForURL((u) => u.href.startsWith(`${app.url}/signed-out`));
    expect(problems).to.deep.equal([]);
    expect(foreign).to.deep.equal([]);
    await page.close();
  });

  it('an error (the sign-in cookie is gone): the page says what happened and shows no code', async function () {
    const { url } = await authorize(BRANDED);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(url.href);
    await waitStatus(page, 'waiting');
    await context.clearCookies();
    await waitStatus(page, 'error');
    expect(await page.textContent('#status')).to.match(/start again from the app/);
    expect((await page.textContent('#emoji'))!.trim()).to.equal('…');
    for (const sel of ['#qr', '#wa', '#countdown']) expect(await page.isVisible(sel), sel).to.equal(false);
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('oidc-4-error') });
    await context.close();
  });

  it('awaiting confirmation, then declined (LOGIN_CONFIRMATION=on): the way back tells the app access_denied', async function () {
    const port = await freePort();
    const confirmIssuer = `http://localhost:${port}/oidc`;
    const confirm = await startStack({
      inProcess: true,
      name: 'oidc-page-confirm',
      webs: 1,
      workers: 1,
      defaultLimits: true,
      env: {
        ...PRODUCTION_ENV,
        LOGIN_CONFIRMATION: 'on',
        PORT: String(port),
        OIDC_ISSUER: confirmIssuer,
        OIDC_CLIENTS: JSON.stringify([{ ...BRANDED, redirect_uris: [callback] }]),
      },
    });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
    try {
      const config = await oidc.discovery(new URL(confirmIssuer), BRANDED.client_id, BRANDED.client_secret, undefined, {
        execute: [oidc.allowInsecureRequests],
      });
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: callback,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: 'st',
      });
      await page.goto(url.href);
      await waitStatus(page, 'waiting');
      const phone = randomPhone();
      await evolutionChat(confirm.url, `PIN: ${(await page.textContent('#emoji'))!.trim()}`, { phone });
      await waitStatus(page, 'awaiting-confirmation');
      expect(await page.textContent('#status')).to.match(/confirm the sign-in in WhatsApp/);
      expect(await axeViolations(page)).to.deep.equal([]);
      await evolutionChat(confirm.url, 'NO', { phone });
      await waitStatus(page, 'denied');
      expect(await page.textContent('#status')).to.match(/declined/);
      expect(await page.evaluate(() => document.activeElement?.id)).to.equal('back');
      expect(await page.textContent('#back')).to.equal('Back to Corner Shop');
      expect(await page.isVisible('#restart')).to.equal(false);
      expect(await axeViolations(page)).to.deep.equal([]);
      await page.screenshot({ path: shot('oidc-5-denied') });
      await page.click('#back');
      await page.waitForURL((u) => u.href.startsWith(callback));
      expect(new URL(page.url()).searchParams.get('error')).to.equal('access_denied');
    } finally {
      await page.close();
      await confirm.stop();
    }
  });

  it('mobile: an unbranded client gets the service look; no sideways scrolling, no axe violations', async function () {
    const { url } = await authorize(PLAIN);
    const page = await browser.newPage({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const problems = watchProblems(page);
    await page.goto(url.href);
    await waitStatus(page, 'waiting');
    expect(await page.textContent('h1')).to.equal('Sign in to plain with WhatsApp');
    expect(await page.$('.brand .logo')).to.equal(null);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).to.be.at.most(360);
    expect((await page.locator('#wa').boundingBox())!.height).to.be.at.least(44);
    expect(await axeViolations(page)).to.deep.equal([]);
    await page.screenshot({ path: shot('oidc-2-phone'), fullPage: true });
    expect(problems).to.deep.equal([]);
    await page.close();
  });

  it("in the person's language (Accept-Language): Portuguese and Spanish, phone and desktop, axe (its contrast rule too) as in English", async function () {
    for (const c of [
      { locale: 'pt-BR', lang: 'pt', title: 'Entrar no Corner Shop com o WhatsApp', waiting: 'Aguardando a sua mensagem…', phone: true },
      { locale: 'es', lang: 'es', title: 'Iniciar sesión en Corner Shop con WhatsApp', waiting: 'Esperando tu mensaje…', phone: false },
    ]) {
      const { url } = await authorize(BRANDED);
      const context = await browser.newContext({
        locale: c.locale,
        ...(c.phone ? { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true } : { viewport: { width: 1280, height: 800 } }),
      });
      const page = await context.newPage();
      const problems = watchProblems(page);
      await page.goto(url.href);
      await waitStatus(page, 'waiting');
      expect(await page.getAttribute('html', 'lang')).to.equal(c.lang);
      expect(await page.textContent('h1')).to.equal(c.title);
      expect(await page.textContent('#status')).to.equal(c.waiting);
      expect(await page.isVisible('#qr'), 'a QR code on the desktop only').to.equal(!c.phone);
      expect(await axeViolations(page)).to.deep.equal([]);
      await page.screenshot({ path: shot(`oidc-6-${c.lang}`), fullPage: true });
      expect(problems).to.deep.equal([]);
      await context.close();
    }
  });

  it('an expired code: the page comes back with a new one', async function () {
    // opened in `before`: its code's lifetime ran out while the tests above ran
    const seen = await expiry;
    expect(seen.url).to.equal(seen.interaction);
    expect(seen.second).to.not.equal(seen.first);
    expect(seen.problems).to.deep.equal([]);
  });
});
