import { keys } from '../../src/redis/keys.js';
import { expect } from 'chai';
import { bothGatewaysEnv, cloudMessage, evolutionMessage, outboundOf, startMockGateway, type MockGateway } from '../helpers/gateway.js';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { eventually, get, post, request } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { connected, type TestClient } from '../realtime/clients.js';
import { expectError } from './support.js';

/**
 * LOGIN_CONFIRMATION=on, through real processes (two web nodes, one worker, real Redis, a mock
 * Evolution API for the replies): a matched code asks the person in the chat; YES from that
 * phone signs in, NO ends the registration, silence lets it expire, and answers from any
 * other phone change nothing. Each on both gateways' payload shapes.
 */
const CHROME_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FIREFOX_ON_ANDROID = 'Mozilla/5.0 (Android 14; Mobile; rv:132.0) Gecko/132.0 Firefox/132.0';
const METRICS_TOKEN = 'confirmation-metrics-token-0123456789';

type Shape = 'evolution' | 'cloud';
const digits = (phone: string): string => phone.replace(/^\+/, '');

function confirmationStack(name: string, env: Record<string, string> = {}) {
  const ctx = {} as { stack: InProcessStack; gw: MockGateway };
  before(async function () {
    this.timeout(60000);
    ctx.gw = await startMockGateway();
    ctx.stack = await startStack({
      inProcess: true,
      name,
      webs: 2,
      workers: 1,
      env: {
        LOGIN_CONFIRMATION: 'on',
        APP_NAME: 'Acme Bank',
        // both gateways: each reply goes out on the channel its message came on
        ...bothGatewaysEnv(ctx.gw.url),
        METRICS_TOKEN,
        METRICS_INTERVAL_MS: '200',
        ...env,
      },
    });
  });
  after(async function () {
    this.timeout(60000);
    await ctx.stack?.stop();
    await ctx.gw?.close();
  });
  return ctx;
}

describe('core: confirming a sign-in in the chat (LOGIN_CONFIRMATION=on)', function () {
  this.timeout(60000);
  const ctx = confirmationStack('confirm');
  const sockets: TestClient[] = [];
  afterEach(() => {
    for (const s of sockets.splice(0)) s.close();
  });

  /** The person's chat message, in the gateway's own shape. */
  const say = async (shape: Shape, phone: string, text: string): Promise<void> => {
    const body = shape === 'evolution' ? evolutionMessage({ text, phone }) : cloudMessage({ text, phone });
    const r = await request(ctx.stack.webs[1]!.url, 'POST', '/messaging-endpoint', { json: body });
    expect(r.status, r.text).to.equal(200);
  };
  const repliesTo = (phone: string): string[] =>
    ctx.gw.requests
      .map(outboundOf)
      .filter((o) => o.to === digits(phone))
      .map((o) => o.text ?? '');
  const waitReply = (phone: string, pattern: RegExp): Promise<string> => eventually(async () => repliesTo(phone).find((t) => pattern.test(t)), 15000, 50);

  /**
   * A client registers over HTTP on one node (with a browser's User-Agent) and follows the same
   * registration over a socket on the other; the person sends the code and is asked.
   */
  async function asked(shape: Shape, phone = randomPhone()) {
    const pin = randomPin();
    const emoji = randomEmoji();
    const reg = await request(ctx.stack.webs[0]!.url, 'POST', '/register-pin', {
      json: { pin, emojiString: emoji },
      headers: { 'user-agent': CHROME_ON_WINDOWS },
    });
    expect(reg.status, reg.text).to.equal(200);
    const socket = await connected(ctx.stack.webs[1]!.url, { extraHeaders: { 'user-agent': FIREFOX_ON_ANDROID } });
    sockets.push(socket);
    socket.socket.emit('register-pin', { pin, emojiString: emoji });
    expect((await socket.next<{ pinId: string }>('pin-registered')).pinId).to.equal(reg.body.pinId);
    await say(shape, phone, `PIN: ${emoji}`);
    const question = await waitReply(phone, /^Sign in to/);
    const waiting = await eventually(async () => {
      const r = await post(ctx.stack.webs[1]!.url, '/check-login', { pin });
      expect(r.status, r.text).to.equal(200);
      return r.body.awaitingConfirmation === true ? r.body : undefined;
    });
    return { pin, emoji, phone, pinId: String(reg.body.pinId), socket, question, waiting };
  }

  for (const shape of ['evolution', 'cloud'] as const) {
    const yes = shape === 'evolution' ? 'YES' : '1';
    const no = shape === 'evolution' ? 'No.' : '2';

    describe(`${shape} payloads`, function () {
      it(`asks before any token exists; "${yes}" from the same phone then signs in (check-login and auth-success)`, async function () {
        const a = await asked(shape);
        // the question names the app, the registering device and masked address, and a time
        expect(a.question).to.match(
          /^Sign in to Acme Bank on Chrome on Windows, 127\.0\.0\.x, \d{1,2} \w+,? \d\d:\d\d UTC\? Reply YES (\d\d) to sign in, NO \1 if this wasn't you\.$/,
        );
        expect(a.waiting).to.deep.equal({
          success: true,
          verified: false,
          awaitingConfirmation: true,
          message: a.waiting.message,
        });
        expect(await a.socket.next('awaiting-confirmation')).to.deep.equal({ pinId: a.pinId });
        expect(a.socket.of('auth-success')).to.have.length(0);
        // the emoji string stays held while the person is asked: another registration of it
        // (refused today; however register-pin answers) never gets this login
        const grabPin = randomPin();
        const grab = await post(ctx.stack.url, '/register-pin', { pin: grabPin, emojiString: a.emoji });
        expect(grab.status, grab.text).to.not.equal(500);

        await say(shape, a.phone, yes);
        const success = await a.socket.next<LoginBody>('auth-success');
        const login = await eventually(async () => {
          const r = await post<LoginBody>(ctx.stack.url, '/check-login', { pin: a.pin });
          expect(r.status, r.text).to.equal(200);
          return r.body.verified ? r.body : undefined;
        });
        expect(login.user.phone).to.equal(a.phone);
        expect(success.user.id).to.equal(login.user.id);
        expect((await post(ctx.stack.url, '/check-login', { pin: grabPin })).body.verified).to.not.equal(true);
        expect((await get(ctx.stack.url, '/profile', login.token)).status).to.equal(200);
        // the login reply says how to undo it
        expect(await waitReply(a.phone, /signed in to Acme Bank/)).to.equal("You're signed in to Acme Bank. Not you? Reply STOP to sign out everywhere.");
        // the session remembers the device that asked (HTTP: Chrome on Windows)
        const listed = await get<{ sessions: Array<{ device: string; ip: string; current: boolean }> }>(ctx.stack.url, '/sessions', login.token);
        expect(listed.body.sessions.find((s) => s.current)).to.include({ device: 'Chrome on Windows', ip: '127.0.0.x' });
      });

      it(`"${no}" from the same phone ends the registration: 403 LOGIN_DENIED, pin-error, a warning and a count`, async function () {
        const a = await asked(shape);
        await a.socket.next('awaiting-confirmation');
        await say(shape, a.phone, no);
        expect(await a.socket.next('pin-error')).to.deep.include({ error: 'LOGIN_DENIED' });
        const denied = await eventually(async () => {
          const r = await post(ctx.stack.url, '/check-login', { pin: a.pin });
          return r.status === 403 ? r : undefined;
        });
        expectError(denied, 403, 'LOGIN_DENIED');
        // the person is told what happened, and the operator sees it
        await waitReply(a.phone, /nobody was signed in/);
        await ctx.stack.workers[0]!.waitForOutput(new RegExp(`login denied in the chat.*${a.pinId}`));
        const metrics = await eventually(async () => {
          const r = await request(ctx.stack.url, 'GET', '/metrics', { token: METRICS_TOKEN });
          const m = /^pinauth_logins_denied_total\{[^}]*\} (\d+)/m.exec(r.text);
          return m && Number(m[1]) >= 1 ? r.text : undefined;
        });
        expect(metrics).to.match(/pinauth_inbound_messages_total\{[^}]*outcome="denied"/);
        // no session was opened, and the emoji string is free again; a late YES changes nothing
        await say(shape, a.phone, yes);
        await waitReply(a.phone, /no sign-in waiting for your answer/);
        expectError(await post(ctx.stack.url, '/check-login', { pin: a.pin }), 403, 'LOGIN_DENIED');
        expect(a.socket.of('auth-success')).to.have.length(0);
        expect((await post(ctx.stack.url, '/register-pin', { pin: randomPin(), emojiString: a.emoji })).status).to.equal(200);
        // the same PIN can't be started again
        expectError(await post(ctx.stack.url, '/register-pin', { pin: a.pin, emojiString: a.emoji }), 403, 'LOGIN_DENIED');
      });

      it('answers and codes from another phone change nothing; the right phone still decides', async function () {
        const a = await asked(shape);
        const other = randomPhone();
        await say(shape, other, yes);
        await waitReply(other, /no sign-in waiting for your answer/);
        await say(shape, other, no);
        await say(shape, other, `PIN: ${a.emoji}`);
        await waitReply(other, /unknown or has expired/);
        await eventually(async () => (repliesTo(other).length === 3 ? true : undefined));
        const still = await post(ctx.stack.url, '/check-login', { pin: a.pin });
        expect(still.body).to.include({ verified: false, awaitingConfirmation: true });
        expect(a.socket.of('auth-success')).to.have.length(0);
        expect(a.socket.of('pin-error')).to.have.length(0);

        await say(shape, a.phone, yes);
        const success = await a.socket.next<LoginBody>('auth-success');
        expect(success.user.phone).to.equal(a.phone);
      });
    });
  }

  it("a socket registration is described by its handshake's User-Agent", async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    const phone = randomPhone();
    const socket = await connected(ctx.stack.webs[0]!.url, { extraHeaders: { 'user-agent': FIREFOX_ON_ANDROID } });
    sockets.push(socket);
    socket.socket.emit('register-pin', { pin, emojiString: emoji });
    const { pinId } = await socket.next<{ pinId: string }>('pin-registered');
    await say('cloud', phone, emoji);
    expect(await waitReply(phone, /^Sign in to/)).to.match(/^Sign in to Acme Bank on Firefox on Android, 127\.0\.0\.x, /);
    expect(await socket.next('awaiting-confirmation')).to.deep.equal({ pinId });
  });

  it('a socket that re-joins while the person is asked hears awaiting-confirmation again', async function () {
    const a = await asked('evolution');
    const again = await connected(ctx.stack.webs[0]!.url);
    sockets.push(again);
    again.socket.emit('register-pin', { pin: a.pin, emojiString: a.emoji });
    expect((await again.next<{ pinId: string }>('pin-registered')).pinId).to.equal(a.pinId);
    expect(await again.next('awaiting-confirmation')).to.deep.equal({ pinId: a.pinId });
  });

  it('a registration waiting for the answer costs at most 1 KiB of Redis, and holds no PIN', async function () {
    const a = await asked('evolution');
    const redis = testRedis();
    try {
      const p = ctx.stack.prefix;
      // the phone's open questions, by number: this one
      const questions = Object.values(await redis.hgetall(keys(p).confirmation(a.phone))).map((q) => JSON.parse(q) as { pinHash: string });
      expect(questions).to.have.length(1);
      const pinHash = questions[0]!.pinHash;
      expect(pinHash).to.be.a('string');
      const reg = await redis.hgetall(keys(p).registration(pinHash!));
      expect(reg.state).to.equal('awaiting');
      const held = [keys(p).registration(pinHash!), keys(p).emoji(reg.emojiHash!), keys(p).confirmation(a.phone)];
      const sizes = await Promise.all(held.map((k) => redis.memory('USAGE', k)));
      // its member of the active set: the hash plus ziplist/skiplist overhead, generously
      const total = sizes.reduce<number>((sum, n) => sum + Number(n ?? 0), 0) + 2 * (pinHash!.length + 16);
      console.log(`      Redis bytes of one registration awaiting confirmation: ${total} (${sizes.join(' + ')} + active-set share)`);
      expect(total).to.be.at.most(1024);
      expect(JSON.stringify(reg)).to.not.include(a.pin);
    } finally {
      redis.disconnect();
    }
  });
});

describe('core: a confirmation nobody answers expires as before', function () {
  this.timeout(60000);
  const ctx = confirmationStack('confirm-expiry', { PIN_TTL_SECONDS: '3' });

  it('no reply: pin-expired to the sockets, 410 to check-login, and a late YES signs nobody in', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    const phone = randomPhone();
    const socket = await connected(ctx.stack.webs[1]!.url);
    try {
      socket.socket.emit('register-pin', { pin, emojiString: emoji });
      await socket.next('pin-registered');
      await request(ctx.stack.webs[0]!.url, 'POST', '/messaging-endpoint', { json: cloudMessage({ text: `PIN: ${emoji}`, phone }) });
      await socket.next('awaiting-confirmation');
      expect(await socket.next('pin-expired', 15000)).to.deep.equal({ pin });
      expectError(await post(ctx.stack.url, '/check-login', { pin }), 410, 'PIN_EXPIRED');
      await request(ctx.stack.webs[0]!.url, 'POST', '/messaging-endpoint', { json: evolutionMessage({ text: 'yes', phone }) });
      await eventually(async () =>
        ctx.gw.requests.map(outboundOf).some((o) => o.to === digits(phone) && /no sign-in waiting/.test(o.text ?? '')) ? true : undefined,
      );
      expect(socket.of('auth-success')).to.have.length(0);
      expectError(await post(ctx.stack.url, '/check-login', { pin }), 410, 'PIN_EXPIRED');
    } finally {
      socket.close();
    }
  });
});
