import { expect } from 'chai';
import { PinAuthClient, type LoginStatus } from '@pin-auth/client';
import { PinHasher } from '../../src/registrations/pin.js';
import { FaultProxy, scriptRequest } from '../helpers/fault-proxy.js';
import { randomPhone, randomPin } from '../helpers/flow.js';
import { post, request, type JsonResponse } from '../helpers/http.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { RELAXED_LIMITS, startStack, type ServiceProcess, type Stack } from '../helpers/processes.js';
import { collectLogin, postChat } from '../ops/support.js';
import { expectError } from '../core/support.js';

/** A reply held longer than the service's command timeout (2 s): the command ran, the answer is lost. */
const LATE_MS = 3000;
const JWT_SECRET = 'client-recovery-production-secret-0123456789abcdef';
const WEBHOOK_SECRET = 'client-recovery-webhook-secret-0123456789abcdef';
/** The service as docs/operations.md starts it: production, every default (limits included). */
const PRODUCTION = {
  ...Object.fromEntries(Object.keys(RELAXED_LIMITS).map((k) => [k, ''])),
  NODE_ENV: 'production',
  JWT_SECRET,
  WEBHOOK_SECRET,
  CHAT_REPLIES: 'false',
};
const hasher = new PinHasher(JWT_SECRET);

/**
 * What a client misses while Redis is slow or away, and how it gets it back, against a service
 * in production mode (server-drawn emoji strings, strong PINs): a registration whose answer was
 * lost is retried with the same Idempotency-Key and gets the same registration; a socket client
 * whose web node was cut off from Redis when its login landed still gets its session.
 *
 * Web node A reaches a private redis-server through a fault proxy; the worker and web node B
 * (a healthy neighbour that takes the webhook) go straight to it.
 */
describe('faults: clients recover what a fault took (production defaults)', function () {
  this.timeout(90000);
  let redis: PrivateRedis;
  let proxy: FaultProxy;
  let stack: Stack;
  let a: ServiceProcess;
  let b: ServiceProcess;

  before(async function () {
    redis = await PrivateRedis.start();
    proxy = await FaultProxy.start(redis.port);
    stack = await startStack({ name: 'faults-client', webs: 0, workers: 1, env: { ...PRODUCTION, REDIS_URL: redis.url } });
    a = await stack.addWeb({ REDIS_URL: proxy.url });
    b = await stack.addWeb();
  });
  after(async function () {
    proxy?.pass();
    await stack?.stop().catch(() => undefined);
    await proxy?.close();
    await redis?.kill();
  });

  const pinPattern = (pin: string): string => hasher.hash(pin).replace(/[-]/g, '\\-');
  /** Holds the reply of the next Redis request about this PIN's registration (check-login's `check`). */
  const loseAnswerFor = (pin: string): Promise<void> => proxy.delayReplyTo(new RegExp(pinPattern(pin)), LATE_MS);
  /** Holds the reply of register-pin's last call, the one that stores the registration (`register` 'write'). */
  const loseRegisterAnswerFor = (pin: string): Promise<void> => proxy.delayReplyTo(new RegExp(`${pinPattern(pin)}[\\s\\S]*\\$5\\r\\nwrite\\r\\n`), LATE_MS);

  it('HTTP: a {pin} registration answered 503 was applied; the same request with the same Idempotency-Key gets that registration, and the person signs in', async function () {
    const pin = `${randomPin()}Aa1`;
    const register = (key: string): Promise<JsonResponse> => request(a.url, 'POST', '/register-pin', { json: { pin }, headers: { 'idempotency-key': key } });
    const held = loseRegisterAnswerFor(pin);
    const first = await register('attempt-1');
    await held;
    expectError(first, 503, 'NETWORK_ERROR');
    expect(first.headers.get('retry-after')).to.match(/^\d+$/);
    // the retry finds what the first attempt stored: not a decoy
    const retry = await register('attempt-1');
    expect(retry.status, retry.text).to.equal(200);
    expect(retry.body).to.include({ success: true, message: 'PIN already registered' });
    expect(retry.body.expiresIn).to.be.within(1, 180);
    const again = await register('attempt-1');
    expect(again.body).to.include({ pinId: retry.body.pinId, emojiString: retry.body.emojiString });
    // another key for a held PIN is a stranger's guess: a decoy, as before
    const stranger = await register('attempt-2');
    expect(stranger.body).to.include({ message: 'PIN registered', expiresIn: 180 });
    expect(stranger.body.pinId).to.not.equal(retry.body.pinId);
    expect(stranger.body.emojiString).to.not.equal(retry.body.emojiString);

    const phone = randomPhone();
    expect((await postChat(b.url, `PIN: ${String(retry.body.emojiString)}`, { phone, secret: WEBHOOK_SECRET })).status).to.equal(200);
    const login = await collectLogin(a.url, pin, 20000);
    expect(login.user.phone).to.equal(phone);
  });

  for (const transport of ['auto', 'polling'] as const) {
    it(`the shipped client (${transport}): its registration's answer is lost, it retries as documented, shows the stored string, and the person signs in`, async function () {
      const client = new PinAuthClient({ baseUrl: a.url, transport });
      const pin = `${randomPin()}Aa1`;
      const held = loseRegisterAnswerFor(pin);
      const login = await client.startLogin({ pin });
      await held;
      expect([...new Intl.Segmenter().segment(login.emojiString)]).to.have.length(8);
      const phone = randomPhone();
      expect((await postChat(b.url, login.text, { phone, secret: WEBHOOK_SECRET })).status).to.equal(200);
      const session = await login.session;
      expect(session.user.phone).to.equal(phone);
      expect(login.status).to.equal('signed-in');
    });
  }

  it('the shipped client: the answer of the check-login that collected the login is lost; its next check gets the same tokens', async function () {
    const client = new PinAuthClient({ baseUrl: a.url, transport: 'polling' });
    const pin = `${randomPin()}Aa1`;
    const login = await client.startLogin({ pin });
    expect((await postChat(b.url, login.text, { secret: WEBHOOK_SECRET })).status).to.equal(200);
    await stack.workers[0]!.waitForOutput(new RegExp(`login.*${login.pinId.replace(/[-]/g, '\\-')}`), 30000);
    // the login is stored: the next check collects it, and its answer comes after A gave up (503)
    const held = loseAnswerFor(pin);
    await held;
    const session = await login.session;
    expect((await request(a.url, 'GET', '/profile', { token: session.token })).status).to.equal(200);
    // it was collected: the PIN is gone once the retry window ends, not before
    expect((await post(a.url, '/check-login', { pin })).body).to.include({ verified: true, token: session.token });
  });

  it('the shipped client: a refresh whose answer is lost is retried inside the leeway and gets the pair; the session stays open', async function () {
    const client = new PinAuthClient({ baseUrl: a.url, transport: 'polling' });
    const login = await client.startLogin();
    expect((await postChat(b.url, login.text, { secret: WEBHOOK_SECRET })).status).to.equal(200);
    const session = await login.session;
    const held = proxy.delayReplyTo(scriptRequest('rotate-session'), LATE_MS);
    const fresh = await client.refresh(session);
    await held;
    expect(fresh.refreshToken).to.not.equal(session.refreshToken);
    expect((await client.profile(fresh)).id).to.equal(session.user.id);
    const next = await client.refresh(fresh);
    expect((await client.profile(next)).id).to.equal(session.user.id);
  });

  it('a socket client stays connected while its web node is cut off from Redis; auth-success published then is lost, and its recheck still gets the session', async function () {
    // rechecks every 2 s; a second client with rechecks off shows what was lost
    const client = new PinAuthClient({ baseUrl: a.url, recheckIntervalMs: 2000 });
    const control = new PinAuthClient({ baseUrl: a.url, recheckIntervalMs: 0 });
    const login = await client.startLogin();
    const lostPin = `${randomPin()}Aa1`;
    const lost = await control.startLogin({ pin: lostPin });
    const statuses: LoginStatus[] = [];
    lost.onStatus((s) => statuses.push(s));

    // A's Redis link hangs: its adapter's subscription hears nothing (the client's socket to A is untouched)
    proxy.blackHole();
    for (const l of [login, lost]) expect((await postChat(b.url, l.text, { phone: randomPhone(), secret: WEBHOOK_SECRET })).status).to.equal(200);
    // both logins landed and were published while A heard nothing; then A's link comes back
    for (const l of [login, lost]) await stack.workers[0]!.waitForOutput(new RegExp(`login.*${l.pinId.replace(/[-]/g, '\\-')}`), 30000);
    proxy.pass();
    proxy.dropConnections();

    const session = await login.session;
    expect(session.token).to.match(/^eyJ/);
    // the control never heard of its login: no auth-success reached it
    expect(lost.status).to.equal('waiting');
    expect(statuses).to.deep.equal(['waiting']);
    // and the login it missed is still there to collect (what a recheck would have found)
    const c = await post(a.url, '/check-login', { pin: lostPin });
    expect(c.body.verified, c.text).to.equal(true);
    await lost.cancel();
  });
});
