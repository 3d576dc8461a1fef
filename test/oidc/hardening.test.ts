import { expect } from 'chai';
import http from 'node:http';
import { randomPhone } from '../helpers/flow.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { cleanPrefix, REDIS_URL, testRedis, uniquePrefix } from '../helpers/redis.js';
import { eventually } from '../helpers/http.js';
import { freePort, procfileCommand, runNode, startProcess, stopProcess, type ServiceProcess, type Stack } from '../helpers/processes.js';
import { Browser } from './browser.js';
import { startProductionOidc } from './production-stack.js';
import { CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, RelyingParty, testClient, type Chat } from './relying-party.js';

/** One HTTP request from a chosen loopback address (127.0.0.0/8 is all loopback): an IP group of its own. */
function fromAddress(
  localAddress: string,
  url: string,
  opts: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', localAddress, headers: opts.headers, agent: false, timeout: 15000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end(opts.body);
  });
}

/** Counts the keys of one kind of provider record under a prefix (tests only: SCAN). */
async function countKeys(prefix: string, model: string): Promise<number> {
  const redis = testRedis();
  try {
    let cursor = '0';
    let n = 0;
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:oidc:${model}:*`, 'COUNT', 1000);
      cursor = next;
      n += found.length;
    } while (cursor !== '0');
    return n;
  } finally {
    redis.disconnect();
  }
}

/**
 * The provider's doors as an attacker finds them (production settings, real processes): a leaked
 * interaction id, floods of authorization and pushed requests from one address, over-long
 * parameters, framing, and odd requests under /oidc.
 */
describe('oidc: interactions bound to their browser, budgeted, capped, unframeable', function () {
  this.timeout(180000);
  const AUTHORIZE_BUDGET = 30;
  const PAGE_BUDGET = 40;
  let stack: Stack;
  let base: string;
  let issuer: string;
  let chat: Chat;
  let rp: RelyingParty;

  before(async function () {
    ({ stack, base, issuer, chat } = await startProductionOidc('oidc-hardening', {
      RATE_OIDC_AUTHORIZE_PER_MINUTE: String(AUTHORIZE_BUDGET),
      RATE_OIDC_INTERACTION_PER_MINUTE: String(PAGE_BUDGET),
    }));
    rp = await RelyingParty.discover(`http://localhost:${new URL(base).port}/oidc`, chat);
  });
  after(async function () {
    await stack?.stop();
  });

  /** The same authorization request from another loopback address (a budget of its own). */
  const at = (address: string, url: string, opts: Parameters<typeof fromAddress>[2] = {}) => {
    const u = new URL(url);
    return fromAddress(address, `http://127.0.0.1:${u.port}${u.pathname}${u.search}`, opts);
  };

  it('a leaked interaction id, used from a browser without its cookie or with another one, neither shows nor finishes the sign-in', async function () {
    const victim = new Browser();
    const { url } = await rp.authorize();
    const page = await rp.openPage(victim, url);
    const uid = page.url.split('/').pop()!;

    // no cookie at all: nothing of the sign-in
    const bare = await new Browser().get(page.url);
    expect(bare.status).to.be.within(400, 499);
    expect(await bare.text()).to.not.include(page.emoji);
    expect((await new Browser().get(`${page.url}/status`)).status).to.be.within(400, 499);

    // the attacker's own interaction cookie, the victim's id in the URL
    const attacker = new Browser();
    const own = await rp.openPage(attacker, (await rp.authorize()).url);
    expect(own.url).to.not.include(uid);
    const stolenPage = await attacker.get(page.url);
    expect(stolenPage.status).to.equal(403);
    // a person who opened it is told to start again, on a page
    expect(stolenPage.headers.get('content-type')).to.match(/^text\/html/);
    expect(await stolenPage.text()).to.not.include(page.emoji);

    // the victim sends the code; the attacker polls the victim's id: refused, and their own sign-in stays pending
    expect((await chat(`PIN: ${page.emoji}`, { phone: randomPhone() })).status).to.equal(200);
    const callback = await rp.awaitCallback(victim, page.url);
    expect(new URL(callback).searchParams.get('code')).to.be.a('string');
    const stolen = await attacker.get(`${page.url}/status`);
    expect(stolen.status).to.equal(403);
    expect(JSON.stringify(await stolen.json())).to.not.include('redirectTo');
    const mine = (await (await attacker.get(`${own.url}/status`)).json()) as { state: string; redirectTo?: string };
    expect(mine.redirectTo).to.equal(undefined);
    expect(mine.state).to.equal('pending');
  });

  it('over-long parameters are refused with invalid_request, and nothing is stored for them', async function () {
    const before = await countKeys(stack.prefix, 'Interaction');
    for (const [param, length] of [
      ['state', 600],
      ['nonce', 300],
      ['login_hint', 300],
    ] as const) {
      const { url } = await rp.authorize({ [param]: 'x'.repeat(length) });
      const res = await at('127.0.0.5', url);
      // the redirect URI is the client's own: the error goes back to the app, as OpenID Connect says
      expect(res.status, res.body).to.equal(303);
      const back = new URL(res.headers.location!);
      expect(`${back.origin}${back.pathname}`).to.equal(REDIRECT_URI);
      expect(back.searchParams.get('error')).to.equal('invalid_request');
      expect(back.searchParams.get('error_description')).to.include(param);
      expect(back.searchParams.get('code')).to.equal(null);
    }
    expect(await countKeys(stack.prefix, 'Interaction')).to.equal(before);
    // a pushed request: a JSON error, no request_uri
    const par = await at('127.0.0.5', `${base}/oidc/request`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        client_id: CLIENT_ID,
        response_type: 'code',
        scope: 'openid',
        redirect_uri: REDIRECT_URI,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        state: 's'.repeat(2000),
      }).toString(),
    });
    expect(par.status, par.body).to.equal(400);
    expect(JSON.parse(par.body)).to.include({ error: 'invalid_request' });
  });

  it('a flood of authorization requests from one address is cut at its budget; Redis keeps at most a budget of sign-ins for it', async function () {
    const before = await countKeys(stack.prefix, 'Interaction');
    const { url } = await rp.authorize({ state: 's'.repeat(400), nonce: 'n'.repeat(200) });
    const statuses: number[] = [];
    let retryAfter: string | undefined;
    // 300 requests, 20 at a time: a tenth of the reported 3,000, enough to cross the budget tenfold
    for (let i = 0; i < 15; i++) {
      const batch = await Promise.all(Array.from({ length: 20 }, () => at('127.0.0.2', url)));
      for (const r of batch) {
        statuses.push(r.status);
        if (r.status === 429) retryAfter = String(r.headers['retry-after']);
      }
    }
    const passed = statuses.filter((s) => s !== 429).length;
    expect(passed).to.be.at.most(AUTHORIZE_BUDGET);
    expect(passed).to.be.greaterThan(0);
    expect(statuses.filter((s) => s === 429)).to.have.length(statuses.length - passed);
    expect(Number(retryAfter)).to.be.within(1, 60);
    const stored = (await countKeys(stack.prefix, 'Interaction')) - before;
    expect(stored).to.be.at.most(AUTHORIZE_BUDGET);
    // short-lived: an interaction is kept minutes, not the default hour
    const redis = testRedis();
    try {
      let cursor = '0';
      let ttls: number[] = [];
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', `${stack.prefix}:oidc:Interaction:*`, 'COUNT', 1000);
        cursor = next;
        ttls = ttls.concat(await Promise.all(found.map((k) => redis.ttl(k))));
      } while (cursor !== '0');
      expect(ttls.length).to.be.greaterThan(0);
      expect(Math.max(...ttls)).to.be.at.most(300);
    } finally {
      redis.disconnect();
    }
    // another address still has its own budget
    expect((await at('127.0.0.3', url)).status).to.equal(303);
  });

  it('a flood of pushed authorization requests from one address is cut at the same budget', async function () {
    const before = await countKeys(stack.prefix, 'PushedAuthorizationRequest');
    const body = new URLSearchParams({
      client_id: CLIENT_ID,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: REDIRECT_URI,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
    };
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      statuses.push(
        ...(await Promise.all(Array.from({ length: 20 }, () => at('127.0.0.4', `${base}/oidc/request`, { method: 'POST', headers, body })))).map(
          (r) => r.status,
        ),
      );
    }
    const created = statuses.filter((s) => s === 201).length;
    expect(created).to.be.greaterThan(0);
    expect(created).to.be.at.most(AUTHORIZE_BUDGET);
    expect(statuses.filter((s) => s !== 201 && s !== 429)).to.deep.equal([]);
    expect((await countKeys(stack.prefix, 'PushedAuthorizationRequest')) - before).to.be.at.most(AUTHORIZE_BUDGET);
  });

  it('the sign-in page and its status spend their own budget per address', async function () {
    const browser = new Browser();
    const page = await rp.openPage(browser, (await rp.authorize()).url);
    const cookie = browser.cookieHeader();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push(
        ...(await Promise.all(Array.from({ length: 20 }, () => at('127.0.0.6', `${page.url}/status`, { headers: { cookie } })))).map((r) => r.status),
      );
    }
    expect(statuses.filter((s) => s === 200).length).to.be.within(1, PAGE_BUDGET);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).to.deep.equal([]);
  });

  it('no provider page can be framed', async function () {
    const browser = new Browser();
    const { url } = await rp.authorize();
    const responses = [
      await browser.get(url),
      await browser.get(`${base}/oidc/.well-known/openid-configuration`),
      await browser.get(url.replace(encodeURIComponent(REDIRECT_URI), encodeURIComponent('https://attacker.example/cb'))),
      await browser.get(`${base}/oidc/session/end`),
    ];
    const page = await rp.openPage(browser, url);
    expect(page.html).to.include('data-emoji');
    responses.push(await browser.get(page.url), await browser.get(`${page.url}/status`));
    for (const res of responses) {
      expect(res.headers.get('x-frame-options'), res.url).to.equal('DENY');
      expect(res.headers.get('content-security-policy'), res.url).to.match(/frame-ancestors 'none'/);
    }
  });

  it('every URL the provider hands out is under the issuer, whatever Host or X-Forwarded-* a caller sends', async function () {
    const forged = { host: 'attacker.example', 'x-forwarded-host': 'attacker.example:8443', 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' };
    const discovery = await at('127.0.0.8', `${base}/oidc/.well-known/openid-configuration`, { headers: forged });
    expect(discovery.status).to.equal(200);
    const doc = JSON.parse(discovery.body) as Record<string, unknown>;
    const urls = Object.entries(doc).filter(([, v]) => typeof v === 'string' && /^[a-z]+:\/\//.test(v));
    expect(urls.map(([k]) => k)).to.include.members([
      'issuer',
      'authorization_endpoint',
      'token_endpoint',
      'jwks_uri',
      'userinfo_endpoint',
      'end_session_endpoint',
    ]);
    for (const [name, url] of urls) expect(url, name).to.satisfy((u: string) => u === issuer || u.startsWith(`${issuer}/`));
    // the authorization request's redirect to the sign-in page
    const { url } = await rp.authorize();
    const auth = await at('127.0.0.8', url, { headers: { ...forged, 'sec-fetch-dest': 'document' } });
    expect(auth.status, auth.body.slice(0, 200)).to.be.within(300, 399);
    const location = new URL(auth.headers.location!, issuer);
    expect(location.origin).to.equal(new URL(issuer).origin);
    expect(location.pathname).to.match(/^\/oidc\/interaction\//);
  });

  it('odd requests under /oidc answer a client error, never a 500', async function () {
    const odd: Array<[string, string, string?, Record<string, string>?]> = [
      ['GET', '/oidc?x=1'],
      ['GET', '/oidc'],
      ['GET', '/oidc/'],
      ['GET', '/oidc//'],
      ['GET', '/oidc/?'],
      ['GET', '/oidc/%zz'],
      ['GET', '/oidc/auth?%zz=1'],
      ['GET', '/oidc/auth?client_id=nobody'],
      ['GET', '/oidc/auth?client_id=test-app&client_id=test-app'],
      ['GET', '/oidc/auth/unknown-uid'],
      ['POST', '/oidc/auth', 'x'],
      ['DELETE', '/oidc/auth'],
      ['GET', '/oidc/interaction/x'],
      ['GET', '/oidc/interaction/x/status'],
      ['GET', '/oidc/interaction/%00'],
      ['GET', `/oidc/interaction/${'a'.repeat(300)}`],
      ['POST', '/oidc/interaction/x'],
      ['GET', '/oidc/me'],
      ['GET', '/oidc/me', undefined, { authorization: 'Bearer garbage' }],
      ['POST', '/oidc/token', 'grant_type=refresh_token&refresh_token=x', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['POST', '/oidc/token', '{', { 'content-type': 'application/json' }],
      ['POST', '/oidc/token', '%%%', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['POST', '/oidc/request', 'a=b', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['GET', '/oidc/session/end?id_token_hint=garbage'],
      ['POST', '/oidc/session/end/confirm', 'xsrf=x&logout=yes', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['GET', '/oidc/.well-known/openid-configuration?x=1'],
      ['GET', '/oidc/jwks?x=1'],
      ['OPTIONS', '/oidc/token'],
      ['PROPFIND', '/oidc/auth'],
      ['GET', `/oidc/${'x/'.repeat(500)}`],
    ];
    for (const [method, path, body, headers] of odd) {
      const res = await at('127.0.0.7', `${base}${path}`, { method, body, headers });
      expect(res.status, `${method} ${path}: ${res.body.slice(0, 200)}`).to.be.within(200, 499);
    }
  });
});

describe('oidc: with Redis gone, the provider answers 503, never 500', function () {
  this.timeout(120000);
  let stack: Stack;
  let redis: PrivateRedis;
  let base: string;
  let rp: RelyingParty;

  before(async function () {
    redis = await PrivateRedis.start();
    let chat: Chat;
    ({ stack, base, chat } = await startProductionOidc('oidc-outage', { REDIS_URL: redis.url }));
    rp = await RelyingParty.discover(`http://localhost:${new URL(base).port}/oidc`, chat);
  });
  after(async function () {
    // its Redis is gone: a graceful stop would wait out the shutdown timeout (ops/shutdown tests that)
    await stack?.stop('SIGKILL');
    await redis?.kill();
  });

  it('userinfo, the token endpoint and the authorization endpoint refuse with 503 and Retry-After; the node stays up', async function () {
    const login = await rp.login({ phone: randomPhone() });
    expect(await rp.userinfoStatus(login.tokens.access_token, login.sub)).to.equal(200);
    await redis.kill();
    const me = await fetch(`${base}/oidc/me`, { headers: { authorization: `Bearer ${login.tokens.access_token}` } });
    expect(me.status, await me.clone().text()).to.equal(503);
    expect(await me.json()).to.include({ error: 'temporarily_unavailable' });
    expect(Number(me.headers.get('retry-after'))).to.be.greaterThan(0);
    const token = await fetch(`${base}/oidc/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: login.tokens.refresh_token! }).toString(),
    });
    expect(token.status, await token.text()).to.equal(503);
    const auth = await fetch((await rp.authorize()).url, { redirect: 'manual' });
    expect(auth.status, await auth.text()).to.equal(503);
    expect(stack.webs[0]!.child.exitCode).to.equal(null);
  });
});

describe('oidc: a client the provider would refuse stops a web node at start', function () {
  this.timeout(60000);
  const prefix = uniquePrefix('oidc-bad-client');
  after(async () => {
    await cleanPrefix(prefix);
  });

  it('one configuration error line names each such client and why; the node never listens', async function () {
    const port = await freePort();
    const secret = 's'.repeat(40);
    const clients = [
      { client_id: 'fragment-app', client_secret: secret, redirect_uris: ['https://app.example/cb#x'] },
      { client_id: 'good-app', client_secret: secret, redirect_uris: ['https://app.example/cb'] },
      { client_id: 'machine-app', client_secret: secret, redirect_uris: ['https://app.example/cb'], grant_types: ['client_credentials'] },
    ];
    const [cmd, ...args] = procfileCommand('web');
    expect(cmd).to.equal('node');
    const run = await runNode(args, {
      NODE_ENV: 'production',
      REDIS_URL,
      KEY_PREFIX: prefix,
      PORT: String(port),
      JWT_SECRET: 'oidc-suite-production-like-secret-0123456789',
      WEBHOOK_SECRET: 'w'.repeat(40),
      OIDC_CLIENTS: JSON.stringify(clients),
      OIDC_ISSUER: `http://localhost:${port}/oidc`,
    });
    expect(run.code, run.stdout + run.stderr).to.equal(1);
    const lines = (run.stdout + run.stderr).split('\n').filter((l) => l.startsWith('{'));
    const errors = lines.map((l) => JSON.parse(l) as { level: string; message: string; problems?: string[] }).filter((l) => l.level === 'error');
    expect(errors, run.stdout).to.have.length(1);
    expect(errors[0]!.message).to.equal('configuration error');
    expect(errors[0]!.problems).to.have.length(2);
    expect(errors[0]!.problems![0]).to.match(/^OIDC client fragment-app: .*fragment/);
    expect(errors[0]!.problems![1]).to.match(/^OIDC client machine-app: grant_types/);
    expect(run.stdout).to.not.include('web listening');
    expect(run.stdout + run.stderr).to.not.include(secret);
  });
});

describe('oidc: a web node started while Redis is down', function () {
  this.timeout(90000);
  let redis: PrivateRedis | undefined;
  let web: ServiceProcess | undefined;
  after(async function () {
    if (web) await stopProcess(web, 'SIGKILL');
    await redis?.kill();
  });

  it('answers the provider 503 with Retry-After at once (its signing keys are not loaded), then serves it once Redis is back', async function () {
    redis = await PrivateRedis.start();
    await redis.kill();
    const port = await freePort();
    web = await startProcess('web', {
      NODE_ENV: 'production',
      REDIS_URL: redis.url,
      PORT: String(port),
      JWT_SECRET: 'oidc-suite-production-like-secret-0123456789',
      WEBHOOK_SECRET: 'w'.repeat(40),
      OIDC_CLIENTS: JSON.stringify([testClient()]),
      OIDC_ISSUER: `http://localhost:${port}/oidc`,
    });
    expect(web.output()).to.match(/OpenID clients not read at start/);
    const discovery = `${web.url}/oidc/.well-known/openid-configuration`;
    for (const url of [discovery, `${web.url}/oidc/me`]) {
      const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
      expect(res.status, url).to.equal(503);
      expect(Number(res.headers.get('retry-after')), url).to.be.greaterThan(0);
      expect(await res.json()).to.include({ success: false, error: 'NETWORK_ERROR' });
    }
    await redis.start();
    const served = await eventually(
      async () => {
        const res = await fetch(discovery, { signal: AbortSignal.timeout(5000) });
        return res.status === 200 ? ((await res.json()) as { issuer: string }) : undefined;
      },
      30000,
      250,
    );
    expect(served.issuer).to.equal(`http://localhost:${port}/oidc`);
  });
});
