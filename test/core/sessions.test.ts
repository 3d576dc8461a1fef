import { keys } from '../../src/redis/keys.js';
import { expect } from 'chai';
import { bothGatewaysEnv, cloudMessage, evolutionMessage, outboundOf, startMockGateway, type MockGateway } from '../helpers/gateway.js';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { eventually, get, post, request } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { expectError } from './support.js';
import type { SessionView } from '../../src/auth/sessions.js';

/**
 * Sessions the person controls, through real processes (two web nodes, one worker, real Redis,
 * a mock Evolution API for the chat replies): list, close one, close all, and STOP in the chat.
 * A closed session's access and refresh tokens are refused at once, on every node.
 */
const SAFARI_ON_IOS = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const digits = (phone: string): string => phone.replace(/^\+/, '');

describe('core: sessions the person controls (GET/DELETE /sessions, STOP in the chat)', function () {
  this.timeout(60000);
  let stack: InProcessStack;
  let gw: MockGateway;
  before(async function () {
    gw = await startMockGateway();
    stack = await startStack({
      inProcess: true,
      name: 'sessions',
      webs: 2,
      workers: 1,
      // both gateways: each reply goes out on the channel its message came on
      env: bothGatewaysEnv(gw.url),
    });
  });
  after(async function () {
    await stack?.stop();
    await gw?.close();
  });
  const web = (i: number): string => stack.webs[i]!.url;

  /** A login of `phone` from a client with this User-Agent, through node `node`; the chat in either gateway's shape. */
  async function login(phone: string, opts: { userAgent?: string; node?: number; shape?: 'evolution' | 'cloud' } = {}): Promise<LoginBody> {
    const pin = randomPin();
    const emoji = randomEmoji();
    const headers: Record<string, string> = opts.userAgent ? { 'user-agent': opts.userAgent } : {};
    const reg = await request(web(opts.node ?? 0), 'POST', '/register-pin', { json: { pin, emojiString: emoji }, headers });
    expect(reg.status, reg.text).to.equal(200);
    const text = `PIN: ${emoji}`;
    const body = opts.shape === 'cloud' ? cloudMessage({ text, phone }) : evolutionMessage({ text, phone });
    expect((await request(web(1), 'POST', '/messaging-endpoint', { json: body })).status).to.equal(200);
    return eventually(async () => {
      const r = await post<LoginBody>(web(opts.node ?? 0), '/check-login', { pin });
      expect(r.status, r.text).to.equal(200);
      return r.body.verified ? r.body : undefined;
    });
  }
  const list = async (token: string, node = 0): Promise<SessionView[]> => {
    const r = await get<{ success: boolean; sessions: SessionView[] }>(web(node), '/sessions', token);
    expect(r.status, r.text).to.equal(200);
    expect(r.body.success).to.equal(true);
    return r.body.sessions;
  };
  /** Both tokens of a login still work (profile; refresh rotates, so the caller gets the new pair). */
  const refresh = (l: { token: string; refreshToken: string }, node = 0) =>
    post<{ token: string; refreshToken: string }>(web(node), '/refresh-token', { refreshToken: l.refreshToken }, l.token);

  it("GET /sessions lists the caller's own sessions: device, masked address, times, the current one", async function () {
    const phone = randomPhone();
    const first = await login(phone, { userAgent: SAFARI_ON_IOS });
    const second = await login(phone, { node: 1 });
    const stranger = await login(randomPhone());
    const sessions = await list(second.token, 1);
    expect(sessions).to.have.length(2);
    const [a, b] = sessions;
    expect(a).to.include({ device: 'Safari on iOS', ip: '127.0.0.x', current: false });
    expect(b).to.include({ device: 'Node.js app', ip: '127.0.0.x', current: true });
    for (const s of sessions) {
      expect(s.id).to.match(/^[A-Za-z0-9_-]{22}$/);
      expect(Date.parse(s.createdAt)).to.be.closeTo(Date.now(), 60000);
      expect(s.lastUsedAt >= s.createdAt).to.equal(true);
      expect(Date.parse(s.expiresAt)).to.be.greaterThan(Date.now() + 29 * 86400_000);
    }
    // each user sees only their own
    expect((await list(stranger.token)).map((s) => s.id)).to.not.include.members(sessions.map((s) => s.id));
    expect((await list(first.token)).find((s) => s.current)!.id).to.equal(a!.id);
    // a refresh is a use of the session
    await new Promise((r) => setTimeout(r, 1100));
    const pair = await refresh(first);
    expect(pair.status, pair.text).to.equal(200);
    const after = (await list(pair.body.token)).find((s) => s.current)!;
    expect(Date.parse(after.lastUsedAt)).to.be.greaterThan(Date.parse(a!.lastUsedAt));
    // no token, no list
    expectError(await get(web(0), '/sessions'), 401, 'AUTHENTICATION_FAILED');
  });

  it("DELETE /sessions/:id closes that session only (its tokens refused at once, on every node); another user's id is unknown", async function () {
    const phone = randomPhone();
    const keep = await login(phone);
    const drop = await login(phone);
    const other = await login(randomPhone());
    const dropId = (await list(drop.token)).find((s) => s.current)!.id;
    const otherId = (await list(other.token)).find((s) => s.current)!.id;

    // someone else's session: answered exactly like one that does not exist, and left open
    expectError(await request(web(0), 'DELETE', `/sessions/${otherId}`, { token: keep.token }), 404, 'SESSION_NOT_FOUND');
    expectError(await request(web(0), 'DELETE', '/sessions/AAAAAAAAAAAAAAAAAAAAAA', { token: keep.token }), 404, 'SESSION_NOT_FOUND');
    expect((await get(web(1), '/profile', other.token)).status).to.equal(200);
    expectError(await request(web(0), 'DELETE', `/sessions/${'x'.repeat(65)}`, { token: keep.token }), 400, 'VALIDATION_ERROR');

    const closed = await request(web(0), 'DELETE', `/sessions/${dropId}`, { token: keep.token });
    expect(closed.status, closed.text).to.equal(200);
    expect(closed.body).to.deep.equal({ success: true, message: 'Session closed' });
    expectError(await get(web(1), '/profile', drop.token), 401, 'AUTHENTICATION_FAILED');
    expectError(await refresh(drop, 1), 401, 'AUTHENTICATION_FAILED');
    expect((await get(web(1), '/profile', keep.token)).status).to.equal(200);
    expect((await list(keep.token)).map((s) => s.id)).to.not.include(dropId);
    // closing it again: unknown
    expectError(await request(web(0), 'DELETE', `/sessions/${dropId}`, { token: keep.token }), 404, 'SESSION_NOT_FOUND');
  });

  it('DELETE /sessions signs out everywhere: every access and refresh token of the user is refused at once', async function () {
    const phone = randomPhone();
    const logins = [await login(phone), await login(phone, { node: 1 }), await login(phone)];
    const other = await login(randomPhone());
    const r = await request(web(1), 'DELETE', '/sessions', { token: logins[0]!.token });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.deep.equal({ success: true, message: 'Signed out everywhere', closed: 3 });
    for (const l of logins) {
      expectError(await get(web(0), '/profile', l.token), 401, 'AUTHENTICATION_FAILED');
      expectError(await refresh(l), 401, 'AUTHENTICATION_FAILED');
    }
    expect((await get(web(0), '/profile', other.token)).status).to.equal(200);
    // the index is gone with them
    const redis = testRedis();
    try {
      expect(await redis.exists(keys(stack.prefix).userSessions(logins[0]!.user.id))).to.equal(0);
    } finally {
      redis.disconnect();
    }
  });

  it('logout and reuse detection take the session out of the index too', async function () {
    const phone = randomPhone();
    const a = await login(phone);
    const b = await login(phone);
    expect(await list(a.token)).to.have.length(2);
    expect((await post(web(0), '/logout', { userId: a.user.id }, a.token)).status).to.equal(200);
    expect(await list(b.token)).to.have.length(1);
    const rotated = await refresh(b);
    expect(rotated.status).to.equal(200);
    // one rotation more, so b's token is no retry of the last one (retry leeway): reuse
    expect((await refresh(rotated.body)).status).to.equal(200);
    expectError(await refresh(b), 401, 'AUTHENTICATION_FAILED'); // spent token: session closed
    const c = await login(phone);
    expect((await list(c.token)).map((s) => s.current)).to.deep.equal([true]);
  });

  for (const shape of ['evolution', 'cloud'] as const) {
    it(`STOP from the phone (${shape} payload) signs that user out everywhere at once, and says so`, async function () {
      const phone = randomPhone();
      const logins = [await login(phone, { shape }), await login(phone, { shape, node: 1 })];
      const other = await login(randomPhone(), { shape });
      // every login reply said how to undo it
      await eventually(async () =>
        gw.requests.map(outboundOf).filter((o) => o.to === digits(phone) && /Reply STOP to sign out everywhere/.test(o.text ?? '')).length === 2
          ? true
          : undefined,
      );
      const text = shape === 'cloud' ? 'Stop' : 'STOP';
      const body = shape === 'cloud' ? cloudMessage({ text, phone }) : evolutionMessage({ text, phone });
      expect((await request(web(0), 'POST', '/messaging-endpoint', { json: body })).status).to.equal(200);
      const reply = await eventually(async () => gw.requests.map(outboundOf).find((o) => o.to === digits(phone) && /signed out of/.test(o.text ?? '')));
      expect(reply.text).to.equal('Done: you are signed out of pin-auth everywhere (2 sessions ended).');
      for (const l of logins) {
        expectError(await get(web(1), '/profile', l.token), 401, 'AUTHENTICATION_FAILED');
        expectError(await refresh(l, 1), 401, 'AUTHENTICATION_FAILED');
      }
      expect((await get(web(1), '/profile', other.token)).status).to.equal(200);
    });
  }
});
