import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { ensureChromium, launch } from '../demo/browser.js';
import { request } from '../helpers/http.js';
import { randomPhone, randomPin } from '../helpers/flow.js';
import { ROOT, startStack, type InProcessStack } from '../helpers/processes.js';
import { postChat } from '../ops/support.js';
import { client, connected, type TestClient } from '../realtime/clients.js';
import { freshIp } from './client.js';

/**
 * Sockets under the origin policy of HTTP, in production settings (two web nodes, a worker):
 * a page of a foreign origin in real Chromium can't open a Socket.IO connection (websocket or
 * polling) and so never sees a code nor the tokens; the service's own origin and a listed one
 * can. With ALLOWED_HOSTS, a DNS-rebinding page (the service under the attacker's name) gets
 * neither a page nor a socket. And one IP group holds at most SOCKETS_PER_IP connections on a node.
 */
const SECRET = 'socket-origin-webhook-secret-of-32-bytes!';
const CAP = 5;
const CLIENT_JS = readFileSync(path.join(ROOT, 'node_modules/socket.io-client/dist/socket.io.min.js'), 'utf8');
const PAGE = '<!doctype html><title>page</title><script src="/sio.js"></script>';
/** The service's own name (ALLOWED_HOSTS); any other name resolving to it is a rebinding. */
const SERVICE_NAME = 'service.example';

/** A request with the given Host header (fetch would send the URL's). */
function withHost(url: string, path: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, { headers: { ...headers, host } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Pages of other origins: one loopback server answering for made-up hosts (Chromium resolves
 * them to 127.0.0.1), so each page is a real document of its own origin on the local network.
 */
function startPages(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const js = req.url === '/sio.js';
    res.writeHead(200, { 'content-type': js ? 'text/javascript' : 'text/html' });
    res.end(js ? CLIENT_JS : PAGE);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** A websocket upgrade by hand: engine.io refuses one with a 400 whose body says why. */
function upgrade(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/socket.io/?EIO=4&transport=websocket`, {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** What a page's Socket.IO client saw (kept in the page, read by the test). */
interface PageLog {
  events: Array<{ event: string; payload: unknown }>;
  connected: boolean;
  errors: string[];
}

describe('security: sockets obey the origin policy, and one network holds a bounded number of them', function () {
  this.timeout(120000);
  let stack: InProcessStack;
  let browser: Browser | undefined;
  let pages: http.Server;
  let LISTED = '';
  let FOREIGN = '';
  const sockets: TestClient[] = [];

  before(async function () {
    this.timeout(300000);
    pages = await startPages();
    const port = (pages.address() as AddressInfo).port;
    LISTED = `http://listed.example:${port}`;
    FOREIGN = `http://evil.example:${port}`;
    stack = await startStack({
      inProcess: true,
      name: 'sec-socket-origin',
      webs: 2,
      workers: 1,
      env: {
        NODE_ENV: 'production',
        JWT_SECRET: 'socket-origin-jwt-secret-0123456789abcdef',
        WEBHOOK_SECRET: SECRET,
        CORS_ORIGINS: LISTED,
        ALLOWED_HOSTS: SERVICE_NAME,
        TRUST_PROXY: 'true',
        SOCKETS_PER_IP: String(CAP),
      },
    });
    if (!ensureChromium()) browser = await launch(['--host-resolver-rules=MAP *.example 127.0.0.1']);
  });
  after(async function () {
    for (const s of sockets.splice(0)) s.close();
    await browser?.close();
    await stack?.stop();
    pages?.close();
  });
  afterEach(() => {
    for (const s of sockets.splice(0)) s.close();
  });

  /**
   * A page at `origin` with the Socket.IO client script from that origin. The service's own
   * origin: its login page (CSP: scripts and sockets of its own origin), the script added from a same-origin URL (which Playwright
   * answers), so the service's CSP stays as it is.
   */
  async function pageAt(origin: string): Promise<Page> {
    if (!browser) throw new Error('no browser');
    const page = await browser.newPage();
    if (stack.webs.some((w) => w.url === origin)) {
      await page.route(`${origin}/sio.js`, (r) => r.fulfill({ contentType: 'text/javascript', body: CLIENT_JS }));
      await page.goto(`${origin}/`);
      await page.addScriptTag({ url: `${origin}/sio.js` });
    } else {
      await page.goto(`${origin}/page`);
    }
    return page;
  }

  /** In the page: connects to `url`, registers a fresh PIN once connected, records everything. */
  async function openSocket(page: Page, url: string, transports: string[], pin: string): Promise<void> {
    await page.evaluate(
      ({ url, transports, pin }) => {
        const w = window as unknown as {
          io: (
            u: string,
            o: object,
          ) => {
            on: (event: string, fn: (e: Error) => void) => void;
            onAny: (fn: (event: string, payload: unknown) => void) => void;
            emit: (event: string, payload: unknown) => void;
          };
          log: PageLog;
        };
        const log: PageLog = { events: [], connected: false, errors: [] };
        w.log = log;
        const s = w.io(url, { transports, reconnection: false, timeout: 8000 });
        s.onAny((event: string, payload: unknown) => log.events.push({ event, payload }));
        s.on('connect_error', (e: Error) => log.errors.push(e.message));
        s.on('connect', () => {
          log.connected = true;
          s.emit('register-pin', { pin });
        });
      },
      { url, transports, pin },
    );
  }
  const logOf = (page: Page): Promise<PageLog> => page.evaluate(() => (window as unknown as { log: PageLog }).log);
  /** Until the page's client received `event` ('connect_error': until it failed to connect). */
  const waitFor = (page: Page, event: string, timeout = 15000): Promise<unknown> =>
    page.waitForFunction(
      (event) => {
        const log = (window as unknown as { log: PageLog }).log;
        return event === 'connect_error' ? log.errors.length > 0 : log.events.some((e) => e.event === event);
      },
      event,
      { timeout },
    );

  it('a foreign page in Chromium: its websocket-only and polling connections are refused, so it never gets a code nor auth-success', async function () {
    if (!browser) return this.skip();
    const node = stack.webs[0]!;
    for (const transports of [['websocket'], ['polling']]) {
      const page = await pageAt(FOREIGN);
      await openSocket(page, node.url, transports, randomPin());
      await waitFor(page, 'connect_error');
      const log = await logOf(page);
      expect(log.connected, transports[0]).to.equal(false);
      expect(
        log.events.map((e) => e.event),
        transports[0],
      ).to.deep.equal([]);
      await page.close();
    }
    // refused by the service, not only unreadable to the page: each handshake was logged as such
    expect(node.output()).to.match(/socket handshake refused: foreign origin/);
  });

  it("the service's own origin and a CORS_ORIGINS one connect, register, and get auth-success across nodes", async function () {
    if (!browser) return this.skip();
    const [a, b] = stack.webs as [(typeof stack.webs)[0], (typeof stack.webs)[0]];
    for (const origin of [a.url, LISTED]) {
      const page = await pageAt(origin);
      await openSocket(page, a.url, ['websocket'], randomPin());
      await waitFor(page, 'pin-registered');
      const registered = (await logOf(page)).events.find((e) => e.event === 'pin-registered')!.payload as { emojiString: string };
      const phone = randomPhone();
      expect((await postChat(b.url, `PIN: ${registered.emojiString}`, { phone, secret: SECRET })).status).to.equal(200);
      await waitFor(page, 'auth-success');
      const success = (await logOf(page)).events.find((e) => e.event === 'auth-success')!.payload as { user: { phone: string } };
      expect(success.user.phone, origin).to.equal(phone);
      await page.close();
    }
  });

  it('handshakes by their Origin header: none, same host, listed pass; foreign, "null" and a look-alike are refused with 403', async function () {
    const node = stack.webs[1]!;
    const host = new URL(node.url).host;
    const handshake = (origin?: string) =>
      request(node.url, 'GET', '/socket.io/?EIO=4&transport=polling', { headers: { 'x-forwarded-for': freshIp(), ...(origin ? { origin } : {}) } });
    for (const origin of [undefined, `http://${host}`, `https://${host}`, LISTED]) {
      const r = await handshake(origin);
      expect(r.status, `${origin}: ${r.text}`).to.equal(200);
    }
    for (const origin of [
      FOREIGN,
      'null',
      `http://${host}.evil.example`,
      `${LISTED}:8080`,
      `http://${host.split(':')[0]}:1`,
      'http://listed.example.evil.example',
    ]) {
      const r = await handshake(origin);
      expect(r.status, `${origin}: ${r.text}`).to.equal(403);
      expect(r.text, origin).to.contain('FORBIDDEN');
    }
    // the websocket upgrade: refused by engine.io with a 400 that says why
    const refused = await upgrade(node.url, { origin: FOREIGN, 'x-forwarded-for': freshIp() });
    expect(refused).to.deep.include({ status: 400 });
    expect(refused.body).to.match(/^FORBIDDEN: /);
    expect((await upgrade(node.url, { origin: LISTED, 'x-forwarded-for': freshIp() })).status).to.equal(101);
    const ws = client(node.url, { extraHeaders: { origin: FOREIGN, 'x-forwarded-for': freshIp() } });
    sockets.push(ws);
    await new Promise<Error>((resolve) => ws.socket.once('connect_error', resolve));
    expect(ws.socket.connected).to.equal(false);
  });

  it('ALLOWED_HOSTS: a DNS-rebinding handshake (its own name as Origin and Host) and its HTTP requests are refused; the listed name and an address pass', async function () {
    const node = stack.webs[1]!;
    const port = new URL(node.url).port;
    const polling = '/socket.io/?EIO=4&transport=polling';
    const rebound = `rebind.example:${port}`;
    // the origin check alone would take it: Origin and Host name the same host
    const refused = await withHost(node.url, polling, rebound, { origin: `http://${rebound}`, 'x-forwarded-for': freshIp() });
    expect(refused.status, refused.body).to.equal(403);
    expect(refused.body).to.contain('FORBIDDEN: this host name is not served here (ALLOWED_HOSTS)');
    const upgraded = await upgrade(node.url, { host: rebound, origin: `http://${rebound}`, 'x-forwarded-for': freshIp() });
    expect(upgraded).to.deep.include({ status: 400 });
    expect(upgraded.body).to.match(/^FORBIDDEN: .*ALLOWED_HOSTS/);
    // the page's requests that rely on same-origin: the API, the page itself
    for (const path of ['/health', '/', '/docs']) {
      const r = await withHost(node.url, path, rebound, { 'x-forwarded-for': freshIp() });
      expect(r.status, path).to.equal(403);
      expect(JSON.parse(r.body), path).to.deep.include({ success: false, error: 'FORBIDDEN' });
    }
    // the listed name (any case, with its port), and an address, pass
    for (const host of [`${SERVICE_NAME}:${port}`, `Service.Example:${port}`, `127.0.0.1:${port}`]) {
      const origin = `http://${host.toLowerCase()}`;
      expect((await withHost(node.url, polling, host, { origin, 'x-forwarded-for': freshIp() })).status, host).to.equal(200);
      expect((await withHost(node.url, '/health', host)).status, host).to.equal(200);
    }
    expect(node.output()).to.match(/socket handshake refused: foreign origin/);
  });

  it('ALLOWED_HOSTS in Chromium: the service under a rebound name serves no page; under its own name the page and its socket work', async function () {
    if (!browser) return this.skip();
    const port = new URL(stack.webs[0]!.url).port;
    const page = await browser.newPage();
    // *.example resolves to 127.0.0.1 in this browser: rebind.example is the attacker's name for the service
    const rebound = await page.goto(`http://rebind.example:${port}/`);
    expect(rebound?.status()).to.equal(403);
    const own = `http://${SERVICE_NAME}:${port}`;
    const served = await page.goto(`${own}/`);
    expect(served?.status()).to.equal(200);
    await page.route(`${own}/sio.js`, (r) => r.fulfill({ contentType: 'text/javascript', body: CLIENT_JS }));
    await page.addScriptTag({ url: `${own}/sio.js` });
    await openSocket(page, own, ['websocket'], randomPin());
    await waitFor(page, 'pin-registered');
    await page.close();
  });

  it(`SOCKETS_PER_IP=${CAP}: the ${CAP + 1}th connection of one IP group on a node is refused, others are not, and a closed one frees its place`, async function () {
    const [a, b] = stack.webs as [(typeof stack.webs)[0], (typeof stack.webs)[0]];
    // an IPv6 /64 is one group, whichever addresses inside it connect
    const net = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:7`;
    const from = (i: number) => ({ extraHeaders: { 'x-forwarded-for': `${net}::${(i + 1).toString(16)}` } });
    for (let i = 0; i < CAP; i++) sockets.push(await connected(a.url, from(i)));
    const refused = await upgrade(a.url, from(CAP).extraHeaders);
    expect(refused.status).to.equal(400);
    expect(refused.body).to.match(/^RATE_LIMITED: /);
    // polling is counted the same way, and answers why
    const polled = await request(a.url, 'GET', '/socket.io/?EIO=4&transport=polling', { headers: { 'x-forwarded-for': `${net}::99` } });
    expect(polled.status).to.equal(403);
    expect(polled.text).to.contain('RATE_LIMITED');
    // another network, and the same network on another node (the cap is per node)
    sockets.push(await connected(a.url, { extraHeaders: { 'x-forwarded-for': freshIp() } }));
    sockets.push(await connected(b.url, from(CAP + 1)));
    // one of the five leaves: its place is free again once the node has seen it go
    sockets[0]!.close();
    let again: TestClient | undefined;
    for (let attempt = 0; attempt < 50 && !again; attempt++) {
      again = await connected(a.url, from(CAP + 2)).catch(() => undefined);
      if (!again) await new Promise((r) => setTimeout(r, 100));
    }
    expect(again, 'a connection after one closed').to.not.equal(undefined);
    sockets.push(again!);
  });
});
