import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Blocks } from '../../src/accounts/block.js';
import { CATALOGUE, fill } from '../../src/chat-catalogue.js';
import { LoginChain } from '../../src/auth/login-chain.js';
import { LoginProcessor } from '../../src/auth/login.js';
import { createApp } from '../../src/http/app.js';
import { startWorkers, type WorkerHost } from '../../src/queues/worker-host.js';
import type { InboundJob } from '../../src/queues/jobs.js';
import { attachRealtime, type Realtime } from '../../src/realtime/server.js';
import type { ClaimReply } from '../../src/redis/scripts.js';
import { emojiHash } from '../../src/registrations/emoji.js';
import type { Caller } from '../../src/registrations/service.js';
import type { Services } from '../../src/services.js';
import { TEST_JWT_SECRET } from '../core/support.js';
import { randomEmoji, randomPhone, randomPin, sendChat, type LoginBody } from '../helpers/flow.js';
import { outboundOf, startFakeEvolution, type FakeEvolution } from '../helpers/gateway.js';
import { eventually, get, post, request, type JsonResponse } from '../helpers/http.js';
import type { Stack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { ClusterTopology } from '../helpers/redis-topology.js';
import { startServices, stopServices } from '../helpers/services.js';
import { Browser } from '../oidc/browser.js';
import { startProductionOidc } from '../oidc/production-stack.js';
import { RelyingParty, type Chat, type Person } from '../oidc/relying-party.js';
import { connected, type TestClient } from '../realtime/clients.js';

const EVO_KEY = 'block-evolution-api-key';
const EN = CATALOGUE.en;
const APP = 'Acme';
const digits = (phone: string): string => phone.replace(/^\+/, '');
const me: Caller = { ip: '127.0.0.1', via: 'http' };
const blockPath = (id: string): string => `/admin/api/v1/users/${encodeURIComponent(id)}/block`;

/**
 * Blocking a person (docs/accounts.md, "Block"), in this process: the service's Koa app and
 * Socket.IO on a port of its own, the real BullMQ workers, a fake Evolution API for the chat
 * replies, the shared Redis under a prefix of its own. Each test is judged by what the person,
 * the waiting client and Redis see.
 */
describe('accounts: block and unblock a person', function () {
  this.timeout(30000);
  let services: Services;
  let workers: WorkerHost;
  let realtime: Realtime;
  let server: http.Server;
  let gw: FakeEvolution;
  let base: string;
  const sockets: TestClient[] = [];

  before(async function () {
    this.timeout(60000);
    gw = await startFakeEvolution({ apiKey: EVO_KEY, instances: ['test-instance'] });
    services = await startServices('block', {
      JWT_SECRET: TEST_JWT_SECRET,
      APP_NAME: APP,
      MESSAGING_PROVIDER: 'evolution',
      EVOLUTION_API_URL: gw.url,
      EVOLUTION_API_KEY: EVO_KEY,
      EVOLUTION_INSTANCE: 'test-instance',
      // the default: only admins are asked in the chat
      LOGIN_CONFIRMATION: 'off',
    });
    workers = startWorkers(services);
    server = http.createServer(createApp(services).callback());
    realtime = attachRealtime(server, services);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async function () {
    this.timeout(30000);
    for (const s of sockets.splice(0)) s.close();
    await realtime?.close();
    await new Promise((resolve) => server?.close(resolve));
    await workers?.close(5000);
    await stopServices(services);
    await gw?.close();
  });
  afterEach(() => {
    for (const s of sockets.splice(0)) s.close();
  });

  const repliesTo = (phone: string): string[] =>
    gw.requests
      .map(outboundOf)
      .filter((o) => o.to === digits(phone))
      .map((o) => o.text ?? '');
  const waitReply = (phone: string, pattern: RegExp): Promise<string> => eventually(async () => repliesTo(phone).find((t) => pattern.test(t)), 15000);
  const userKey = (id: string): string => services.keys.user(id);

  /** Registers over HTTP and sends the code from `phone`: the pin, once the worker has answered. */
  async function sendCode(phone: string): Promise<{ pin: string; emoji: string }> {
    const pin = randomPin();
    const emoji = randomEmoji();
    expect((await post(base, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
    const hook = await sendChat(base, `PIN: ${emoji}`, { phone, pushName: 'Blo Cked' });
    expect(hook.status, hook.text).to.equal(200);
    return { pin, emoji };
  }
  /** check-login until it is no longer pending (verified, or an error). */
  const settled = (pin: string): Promise<JsonResponse<LoginBody>> =>
    eventually(async () => {
      const r = await post<LoginBody>(base, '/check-login', { pin });
      return r.status === 200 && !r.body.verified ? undefined : r;
    }, 15000);
  /** A whole sign-in of a person asked nothing. */
  async function signIn(phone: string): Promise<LoginBody> {
    const { pin } = await sendCode(phone);
    const r = await settled(pin);
    expect(r.status, r.text).to.equal(200);
    return r.body;
  }
  /** A person made admin on their record (as the first admin is); their token opens the admin API. */
  async function anAdmin(): Promise<LoginBody & { phone: string }> {
    const phone = randomPhone();
    const login = await signIn(phone);
    await services.redis.hset(userKey(login.user.id), 'roles', JSON.stringify(['user', 'admin']));
    return { ...login, phone };
  }

  it('blocking ends every app session and OpenID login at once; their tokens and refreshes are refused; audited with the admin', async function () {
    const admin = await anAdmin();
    const phone = randomPhone();
    const first = await signIn(phone);
    const second = await signIn(phone);
    expect(second.user.id).to.equal(first.user.id);
    const id = first.user.id;
    // an OpenID login of the person (a grant the adapter indexed under the account)
    const grant = services.keys.oidc('Grant', `g-${randomPin()}`);
    await services.redis.set(grant, JSON.stringify({ accountId: id, clientId: 'app' }));
    await services.redis.zadd(services.keys.oidcAccount(id), Date.now() + 60_000, grant);

    const r = await request(base, 'POST', blockPath(id), {
      json: { reason: '  reported for fraud  ' },
      token: admin.token,
      headers: { 'x-request-id': 'req-block-1' },
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.deep.include({ success: true, sessionsEnded: 3 });
    const blockedAt = Date.parse(String(r.body.blockedAt));
    expect(Math.abs(blockedAt - Date.now())).to.be.below(10_000);

    for (const login of [first, second]) {
      expect((await get(base, '/profile', login.token)).status).to.equal(401);
      expect((await post(base, '/refresh-token', { refreshToken: login.refreshToken }, login.token)).status).to.equal(401);
    }
    expect(await services.redis.exists(grant)).to.equal(0);
    const fields = await services.redis.hgetall(userKey(id));
    expect(fields).to.include({ blockedAt: String(blockedAt), blockedBy: `admin:${admin.user.id}`, blockReason: 'reported for fraud' });

    // the person as the admin API shows them
    const shown = await get<{ user: Record<string, unknown> }>(base, `/admin/api/v1/users/${id}`, admin.token);
    expect(shown.status, shown.text).to.equal(200);
    expect(shown.body.user).to.deep.include({
      blocked: true,
      blockedAt: r.body.blockedAt,
      blockedBy: `admin:${admin.user.id}`,
      blockReason: 'reported for fraud',
    });
    expect(shown.body.user.sessions).to.deep.equal([]);

    // once more: the first block stays, nothing is left to end, nothing new is recorded
    const again = await request(base, 'POST', blockPath(id), { json: {}, token: admin.token });
    expect(again.body).to.deep.equal({ success: true, blockedAt: r.body.blockedAt, sessionsEnded: 0 });
    const events = await services.audit.list({ userId: id, types: ['account.blocked'] });
    expect(events.events).to.have.length(1);
    expect(events.events[0]).to.deep.include({ actor: `admin:${admin.user.id}`, requestId: 'req-block-1', userId: id });
    expect(events.events[0]!.detail).to.deep.include({ sessionsEnded: 3, reason: 'reported for fraud' });
    expect(events.events[0]!.ipGroup).to.be.a('string');
  });

  it('a blocked person signs no one in: check-login LOGIN_DENIED, the socket pin-error LOGIN_DENIED, the chat says why; no session is opened; unblock restores', async function () {
    const admin = await anAdmin();
    const phone = randomPhone();
    const { user } = await signIn(phone);
    expect((await request(base, 'POST', blockPath(user.id), { json: {}, token: admin.token })).status).to.equal(200);

    // HTTP polling
    const { pin, emoji } = await sendCode(phone);
    const polled = await settled(pin);
    expect(polled.status, polled.text).to.equal(403);
    expect(polled.body).to.deep.include({ error: 'LOGIN_DENIED' });
    expect(await waitReply(phone, /blocked/)).to.equal(fill(EN.blocked, { app: APP }));
    // the emoji string is free again, and the account has no session
    expect(await services.redis.get(services.keys.emoji(emojiHash(emoji)))).to.equal(null);
    expect(await services.redis.zcard(services.keys.userSessions(user.id))).to.equal(0);

    // the socket
    const socket = await connected(base);
    sockets.push(socket);
    const sPin = randomPin();
    const sEmoji = randomEmoji();
    socket.socket.emit('register-pin', { pin: sPin, emojiString: sEmoji });
    await socket.next('pin-registered');
    expect((await sendChat(base, `PIN: ${sEmoji}`, { phone })).status).to.equal(200);
    expect(await socket.next('pin-error', 15000)).to.deep.include({ error: 'LOGIN_DENIED' });
    expect(socket.of('auth-success')).to.deep.equal([]);
    expect(await services.redis.zcard(services.keys.userSessions(user.id))).to.equal(0);
    const outcomes = await services.audit.list({ userId: user.id, types: ['account.blocked'] });
    expect(outcomes.events).to.have.length(1);

    // unblocked: the next code signs in, as the same account
    const un = await request(base, 'DELETE', blockPath(user.id), { token: admin.token });
    expect(un.status, un.text).to.equal(200);
    expect(un.body).to.deep.equal({ success: true });
    expect(await services.redis.hmget(userKey(user.id), 'blockedAt', 'blockedBy', 'blockReason')).to.deep.equal([null, null, null]);
    const back = await signIn(phone);
    expect(back.user.id).to.equal(user.id);
    expect((await get(base, '/profile', back.token)).status).to.equal(200);
    const unblocked = await services.audit.list({ userId: user.id, types: ['account.unblocked'] });
    expect(unblocked.events.map((e) => e.actor)).to.deep.equal([`admin:${admin.user.id}`]);
    // unblocking again changes and records nothing
    expect((await request(base, 'DELETE', blockPath(user.id), { token: admin.token })).status).to.equal(200);
    expect((await services.audit.list({ userId: user.id, types: ['account.unblocked'] })).events).to.have.length(1);
  });

  it('an admin is asked in the chat even with LOGIN_CONFIRMATION off: YES signs in, NO denies; a person without the role is not asked', async function () {
    const admin = await anAdmin();
    const { pin } = await sendCode(admin.phone);
    const question = await waitReply(admin.phone, /YES \d+/);
    const n = /YES (\d+)/.exec(question)![1]!;
    // the login waits for the answer
    const waiting = await post<LoginBody & { state?: string }>(base, '/check-login', { pin });
    expect(waiting.status).to.equal(200);
    expect(waiting.body.verified).to.equal(false);
    expect((await sendChat(base, `YES ${n}`, { phone: admin.phone })).status).to.equal(200);
    const signed = await settled(pin);
    expect(signed.status, signed.text).to.equal(200);
    expect(signed.body.user.id).to.equal(admin.user.id);
    expect(signed.body.user.roles).to.include('admin');

    const denied = await sendCode(admin.phone);
    const q2 = await eventually(async () => repliesTo(admin.phone).filter((t) => /YES \d+/.test(t))[1], 15000);
    const n2 = /NO (\d+)/.exec(q2)![1]!;
    expect((await sendChat(base, `NO ${n2}`, { phone: admin.phone })).status).to.equal(200);
    const refused = await settled(denied.pin);
    expect(refused.status).to.equal(403);
    expect(refused.body).to.deep.include({ error: 'LOGIN_DENIED' });

    // a person without the role signs in at once; their stray YES is no answer (nothing is said)
    const phone = randomPhone();
    await signIn(phone);
    expect((await sendChat(base, 'YES', { phone })).status).to.equal(200);
    await signIn(phone);
    // two sign-ins, two "signed in" replies, and nothing else (the stray YES is answered by nothing)
    const signedIn = fill(EN.signedIn, { app: APP });
    await eventually(async () => (repliesTo(phone).filter((t) => t.startsWith(signedIn)).length === 2 ? true : undefined), 15000);
    expect(repliesTo(phone).filter((t) => !t.startsWith(signedIn))).to.deep.equal([]);
  });

  it('API keys: a read-only key cannot block or unblock (403); a users:write key can, and the audit trail names the key', async function () {
    const person = await signIn(randomPhone());
    const id = person.user.id;
    const reader = await services.apiKeys.create({ name: 'reader', scopes: ['users:read', 'events:read'] }, { kind: 'system' });
    const writer = await services.apiKeys.create({ name: 'writer', scopes: ['users:write'] }, { kind: 'system' });
    const refused = await request(base, 'POST', blockPath(id), { json: {}, token: reader.secret });
    expect(refused.status, refused.text).to.equal(403);
    expect(refused.body).to.deep.include({ error: 'FORBIDDEN' });
    expect((await request(base, 'DELETE', blockPath(id), { token: reader.secret })).status).to.equal(403);
    expect(await services.redis.hexists(userKey(id), 'blockedAt')).to.equal(0);
    expect((await get(base, '/profile', person.token)).status).to.equal(200);

    const done = await request(base, 'POST', blockPath(id), { json: { reason: 'by key' }, token: writer.secret });
    expect(done.status, done.text).to.equal(200);
    expect(done.body.sessionsEnded).to.equal(1);
    expect(await services.redis.hget(userKey(id), 'blockedBy')).to.equal(`key:${writer.key.id}`);
    expect((await request(base, 'DELETE', blockPath(id), { token: writer.secret })).status).to.equal(200);
    const trail = await services.audit.list({ userId: id, types: ['account.blocked', 'account.unblocked'] });
    expect(trail.events.map((e) => [e.type, e.actor])).to.deep.equal([
      ['account.unblocked', `key:${writer.key.id}`],
      ['account.blocked', `key:${writer.key.id}`],
    ]);
  });

  it('the doors: no token 401, a person without the role 403, an unknown user 404, bad ids and bodies 400, an admin blocking themself 403', async function () {
    const admin = await anAdmin();
    const person = await signIn(randomPhone());
    const id = person.user.id;
    expect((await request(base, 'POST', blockPath(id), { json: {} })).status).to.equal(401);
    expect((await request(base, 'DELETE', blockPath(id))).status).to.equal(401);
    expect((await request(base, 'POST', blockPath(id), { json: {}, token: 'not.a.token' })).status).to.equal(401);
    // a signed-in person without the role: not even their own block is theirs to lift
    expect((await request(base, 'POST', blockPath(admin.user.id), { json: {}, token: person.token })).status).to.equal(403);
    expect((await request(base, 'DELETE', blockPath(id), { token: person.token })).status).to.equal(403);
    const unknown = await request(base, 'POST', blockPath('nobody-with-this-id'), { json: {}, token: admin.token });
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.deep.include({ error: 'NOT_FOUND' });
    expect((await request(base, 'DELETE', blockPath('nobody-with-this-id'), { token: admin.token })).status).to.equal(404);
    // nothing was written for the unknown id
    expect(await services.redis.exists(userKey('nobody-with-this-id'))).to.equal(0);
    for (const bad of ['a b', 'x'.repeat(65), '..', '{u1}']) {
      const r = await request(base, 'POST', blockPath(bad), { json: {}, token: admin.token });
      expect(r.status, bad).to.be.oneOf([400, 404]);
      expect(await services.redis.hexists(userKey(bad), 'blockedAt'), bad).to.equal(0);
    }
    expect((await request(base, 'POST', blockPath('a%20b'), { json: {}, token: admin.token })).status).to.equal(400);
    const long = await request(base, 'POST', blockPath(id), { json: { reason: 'x'.repeat(201) }, token: admin.token });
    expect(long.status).to.equal(400);
    expect(long.body).to.deep.include({ error: 'VALIDATION_ERROR' });
    expect((await request(base, 'POST', blockPath(id), { json: { reason: 7 }, token: admin.token })).status).to.equal(400);
    expect((await request(base, 'POST', blockPath(id), { json: { reason: 'ok', extra: true }, token: admin.token })).status).to.equal(400);
    // a cross-site form (text/plain) is no JSON body
    const form = await request(base, 'POST', blockPath(id), { raw: '{"reason":"x"}', headers: { 'content-type': 'text/plain' }, token: admin.token });
    expect(form.status).to.equal(400);
    expect(
      (await request(base, 'POST', blockPath(id), { raw: 'x'.repeat(20_000), headers: { 'content-type': 'application/json' }, token: admin.token })).status,
    ).to.equal(413);
    const self = await request(base, 'POST', blockPath(admin.user.id), { json: {}, token: admin.token });
    expect(self.status).to.equal(403);
    // none of these blocked anyone: the person still signs in
    expect(await services.redis.hexists(userKey(id), 'blockedAt')).to.equal(0);
    expect((await get(base, '/profile', person.token)).status).to.equal(200);
    expect((await get(base, '/profile', admin.token)).status).to.equal(200);
  });
});

/**
 * The OpenID login (the same chat login, through real processes under production settings, as
 * test/oidc runs it): blocking ends the app's tokens, its refresh and the browser's provider
 * session; a new OpenID sign-in of the blocked person is refused (access_denied); unblocked, it works.
 */
describe('accounts: block and the OpenID login', function () {
  this.timeout(120000);
  let stack: Stack;
  let base: string;
  let chat: Chat;
  let rp: RelyingParty;
  before(async function () {
    ({ stack, base, chat } = await startProductionOidc('block-oidc'));
    rp = await RelyingParty.discover(`http://localhost:${new URL(base).port}/oidc`, chat);
  });
  after(async () => stack?.stop());

  /** A PIN login in the service's own app (the server draws the emoji string in production): its body. */
  const appLogin = async (who: Person): Promise<LoginBody> => {
    const pin = randomPin();
    const reg = await post(base, '/register-pin', { pin });
    expect(reg.status, reg.text).to.equal(200);
    expect((await chat(`PIN: ${String(reg.body.emojiString)}`, who)).status).to.equal(200);
    return eventually(async () => {
      const r = await post<LoginBody>(base, '/check-login', { pin });
      return r.body.verified ? r.body : undefined;
    }, 30000);
  };

  it('blocked: the OpenID tokens, refresh and provider session are dead, a new OpenID sign-in is refused; unblocked: it signs in', async function () {
    const adminLogin = await appLogin({ phone: randomPhone(), pushName: 'Ada Admin' });
    const redis = testRedis();
    try {
      await redis.hset(`${stack.prefix}:user:{u${adminLogin.user.id}}`, 'roles', JSON.stringify(['user', 'admin']));
    } finally {
      redis.disconnect();
    }
    const who = { phone: randomPhone(), pushName: 'Olga Idc' };
    const login = await rp.login(who);
    expect(await rp.userinfoStatus(login.tokens.access_token, login.sub)).to.equal(200);
    expect((await rp.promptNone(login.browser)).searchParams.get('code')).to.be.a('string');

    const r = await request(base, 'POST', `/admin/api/v1/users/${login.sub}/block`, { json: { reason: 'oidc' }, token: adminLogin.token });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.sessionsEnded).to.be.at.least(1);
    expect(await rp.userinfoStatus(login.tokens.access_token, login.sub)).to.equal(401);
    expect(await rp.refreshOutcome(login.tokens.refresh_token!)).to.equal('invalid_grant');
    const none = (await rp.promptNone(login.browser)).searchParams;
    expect(none.get('code')).to.equal(null);
    expect(none.get('error')).to.equal('login_required');

    // a new sign-in with the code from the chat: refused, no code for the app
    const attempt = await rp.authorize();
    const refused = new URL(await rp.signIn(new Browser(), attempt.url, who));
    expect(refused.searchParams.get('code')).to.equal(null);
    expect(refused.searchParams.get('error')).to.equal('access_denied');

    const un = await request(base, 'DELETE', `/admin/api/v1/users/${login.sub}/block`, { token: adminLogin.token });
    expect(un.status, un.text).to.equal(200);
    const again = await rp.login(who);
    expect(again.sub).to.equal(login.sub);
    expect(await rp.userinfoStatus(again.tokens.access_token, again.sub)).to.equal(200);
  });
});

/** The chain itself, on one server one step per call: a block landing between its steps, and the confirmation on. */
describe('accounts: the login chain refuses a blocked account', function () {
  let services: Services;
  before(async function () {
    services = await startServices('block-chain', { JWT_SECRET: TEST_JWT_SECRET });
  });
  after(async () => stopServices(services));
  chainScenarios(() => services, false);
  chainScenarios(() => services, true);

  it('a block landing after the account was read and before the session is opened (a cluster runs the chain step by step): refused, the claim undone', async function () {
    const s = services;
    const phone = randomPhone();
    const plain = processor(s, false, true);
    const first = await plain.process(say(phone, `PIN: ${await registered(s, randomPin())}`));
    expect(first.outcome).to.equal('logged-in');
    if (first.outcome !== 'logged-in') return;
    const userId = first.result.user.id;
    const blocks = blocksOf(s);
    /** blocks the account just before the chain's `user` step */
    class BlockingChain extends LoginChain {
      protected override async step(step: string, keys: string[], json: string): Promise<ClaimReply> {
        if (step === 'user') await blocks.block(userId, { kind: 'system' }, 'race');
        return super.step(step, keys, json);
      }
    }
    const pin = randomPin();
    const emoji = await registered(s, pin);
    const racing = new LoginProcessor(
      s.scripts,
      s.keys,
      s.tokens,
      s.sessions,
      { graceSeconds: 120, confirm: false, stepwise: true },
      new BlockingChain(s.scripts, s.keys, true),
    );
    const job = say(phone, `PIN: ${emoji}`);
    expect(await racing.process(job)).to.deep.include({ outcome: 'blocked', userId });
    expect(await stateOf(s, pin)).to.equal('LOGIN_DENIED');
    expect(await s.redis.zcard(s.keys.userSessions(userId))).to.equal(0);
    // its retry (same nonce) is refused again, and opens nothing
    expect(await plain.process(job)).to.deep.include({ outcome: 'blocked', userId });
    expect(await s.redis.zcard(s.keys.userSessions(userId))).to.equal(0);
  });
});

/** The same on a 3-primary Redis Cluster: every step on its own slot, routed across shards. */
describe('accounts: block on a 3-primary cluster', function () {
  this.timeout(90000);
  let topo: ClusterTopology | undefined;
  let services: Services | undefined;
  before(async function () {
    topo = await ClusterTopology.start({ primaries: 3 });
    services = await startServices('block-cl', { ...topo.env(), JWT_SECRET: TEST_JWT_SECRET });
  });
  after(async function () {
    await services?.close();
    await topo?.stop();
  });
  chainScenarios(() => services!, true);
});

const say = (phone: string, text: string): InboundJob => ({
  message: { provider: 'cloud', id: randomPin().slice(4), phone, text, displayName: 'Chain Block' },
  nonce: randomPin(),
  receivedAt: Date.now(),
});
const processor = (s: Services, confirm: boolean, stepwise: boolean) =>
  new LoginProcessor(s.scripts, s.keys, s.tokens, s.sessions, { graceSeconds: 120, confirm, stepwise });
const blocksOf = (s: Services) => new Blocks(s.scripts, s.keys, s.sessions, s.audit);
/** A registration of `pin`; its emoji string. */
async function registered(s: Services, pin: string): Promise<string> {
  const emoji = randomEmoji();
  await s.registrations.register(pin, emoji, me);
  return emoji;
}
const stateOf = async (s: Services, pin: string): Promise<string> => {
  try {
    return (await s.registrations.check(pin, me)).state;
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
};

/** The chain's answers for a blocked account and an admin, with confirmation on and off. */
function chainScenarios(of: () => Services, stepwise: boolean): void {
  it(`${stepwise ? 'one step per call' : 'the whole chain in one call'}: blocked: a code (confirmation off), a code asked about (on: refused before anyone is asked), a YES to a question asked before the block; unblocked: signs in`, async function () {
    const s = of();
    const off = processor(s, false, stepwise);
    const on = processor(s, true, stepwise);
    const phone = randomPhone();
    const first = await off.process(say(phone, `PIN: ${await registered(s, randomPin())}`));
    expect(first.outcome).to.equal('logged-in');
    if (first.outcome !== 'logged-in') return;
    const userId = first.result.user.id;

    // a question asked before the block
    const askedPin = randomPin();
    expect((await on.process(say(phone, `PIN: ${await registered(s, askedPin)}`))).outcome).to.equal('confirmation-asked');
    const blocked = await blocksOf(s).block(userId, { kind: 'system' }, undefined);
    expect(blocked.sessionsEnded).to.equal(1);
    expect(await on.process(say(phone, 'YES'))).to.deep.include({ outcome: 'blocked', userId });
    expect(await stateOf(s, askedPin)).to.equal('LOGIN_DENIED');
    // the question is gone with it
    expect(await s.redis.exists(s.keys.confirmation(phone))).to.equal(0);

    for (const p of [off, on]) {
      const pin = randomPin();
      const out = await p.process(say(phone, `PIN: ${await registered(s, pin)}`));
      expect(out, p === on ? 'confirmation on' : 'off').to.deep.include({ outcome: 'blocked', userId });
      expect(await stateOf(s, pin)).to.equal('LOGIN_DENIED');
    }
    expect(await s.redis.zcard(s.keys.userSessions(userId))).to.equal(0);
    // someone else signs in meanwhile, asked nothing
    expect((await off.process(say(randomPhone(), `PIN: ${await registered(s, randomPin())}`))).outcome).to.equal('logged-in');

    await blocksOf(s).unblock(userId, { kind: 'system' });
    const back = await off.process(say(phone, `PIN: ${await registered(s, randomPin())}`));
    expect(back.outcome).to.equal('logged-in');
    if (back.outcome === 'logged-in') expect(back.result.user.id).to.equal(userId);
  });

  it(`${stepwise ? 'one step per call' : 'the whole chain in one call'}: an account with the admin role is asked with confirmation off; YES signs it in; the role taken away, the next code signs in at once`, async function () {
    const s = of();
    const off = processor(s, false, stepwise);
    const phone = randomPhone();
    const first = await off.process(say(phone, `PIN: ${await registered(s, randomPin())}`));
    if (first.outcome !== 'logged-in') throw new Error(first.outcome);
    const userId = first.result.user.id;
    await s.redis.hset(s.keys.user(userId), 'roles', JSON.stringify(['user', 'admin']));
    const pin = randomPin();
    const asked = await off.process(say(phone, `PIN: ${await registered(s, pin)}`));
    expect(asked.outcome).to.equal('confirmation-asked');
    expect(await stateOf(s, pin)).to.equal('awaiting');
    const yes = await off.process(say(phone, 'YES'));
    expect(yes.outcome).to.equal('logged-in');
    if (yes.outcome === 'logged-in') expect(yes.result.user).to.deep.include({ id: userId, roles: ['user', 'admin'] });
    expect(await stateOf(s, pin)).to.equal('verified');
    // a YES with nothing asked is still no answer with confirmation off
    expect((await off.process(say(phone, 'YES'))).outcome).to.equal('not-a-code');
    await s.redis.hset(s.keys.user(userId), 'roles', JSON.stringify(['user']));
    expect((await off.process(say(phone, `PIN: ${await registered(s, randomPin())}`))).outcome).to.equal('logged-in');
  });
}
