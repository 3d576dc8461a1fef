import { expect } from 'chai';
import type { Socket } from 'socket.io-client';
import { randomPhone, randomPin, randomEmoji, sendChat } from '../helpers/flow.js';
import { startMockGateway, type MockGateway } from '../helpers/gateway.js';
import { request } from '../helpers/http.js';
import { RELAXED_LIMITS, startStack, type InProcessNode, type InProcessStack } from '../helpers/processes.js';
import { connectSocket, freshIp, loginFrom, newRegistration, postFrom, queuesIdle } from './client.js';
import { expectRateLimited } from './expect-error.js';

/** Blank values make the service fall back to its own defaults, the ones the README documents. */
const SERVICE_DEFAULTS = Object.fromEntries(Object.keys(RELAXED_LIMITS).map((k) => [k, '']));
const D = { register: 30, check: 120, unknown: 30, send: 30, reply: 5, socket: 20 };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('security: rate limits at their defaults, on real processes', function () {
  let stack: InProcessStack;
  let gateway: MockGateway;
  /** a second web node of the same deployment that does not trust X-Forwarded-For */
  let untrusted: InProcessNode;

  before(async function () {
    gateway = await startMockGateway();
    stack = await startStack({
      inProcess: true,
      name: 'sec-limits',
      env: {
        ...SERVICE_DEFAULTS,
        TRUST_PROXY: 'true',
        MESSAGING_PROVIDER: 'evolution',
        EVOLUTION_API_URL: gateway.url,
        EVOLUTION_API_KEY: 'test-key',
        EVOLUTION_INSTANCE: 'sec',
      },
    });
    untrusted = await stack.addWeb({ TRUST_PROXY: 'false' });
  });
  after(async function () {
    await stack?.stop();
    await gateway?.close();
  });

  it(`registrations: ${D.register} a minute per IP, then 429 RATE_LIMITED with Retry-After; HTTP and sockets share the budget`, async function () {
    const ip = freshIp();
    for (let i = 0; i < D.register - 1; i++) {
      const r = await postFrom(stack.url, ip, '/register-pin', newRegistration());
      expect(r.status, r.text).to.equal(200);
    }
    const socket = await connectSocket(stack.url, ip);
    try {
      const viaSocket = (await socket.timeout(5000).emitWithAck('register-pin', newRegistration())) as Record<string, unknown>;
      expect(viaSocket.success, JSON.stringify(viaSocket)).to.equal(true);
      const overSocket = (await socket.timeout(5000).emitWithAck('register-pin', newRegistration())) as Record<string, unknown>;
      expect(overSocket).to.include({ success: false, error: 'RATE_LIMITED' });
    } finally {
      socket.close();
    }
    const over = await postFrom(stack.url, ip, '/register-pin', newRegistration());
    expectRateLimited(over);
    expect(Number(over.headers.get('retry-after'))).to.be.at.most(60);
    const other = await postFrom(stack.url, freshIp(), '/register-pin', newRegistration());
    expect(other.status, other.text).to.equal(200);
  });

  it(`checks: ${D.check} a minute per IP, whichever PINs are checked`, async function () {
    // 60 pending PINs, registered from other addresses, each checked twice (its per-PIN burst)
    const pins: string[] = [];
    for (let batch = 0; batch < 2; batch++) {
      const ip = freshIp();
      const regs = Array.from({ length: D.check / 4 }, newRegistration);
      const answers = await Promise.all(regs.map((r) => postFrom(stack.url, ip, '/register-pin', r)));
      for (const a of answers) expect(a.status, a.text).to.equal(200);
      pins.push(...regs.map((r) => r.pin));
    }
    const checker = freshIp();
    const checks = await Promise.all([...pins, ...pins].map((pin) => postFrom(stack.url, checker, '/check-login', { pin })));
    for (const c of checks) expect(c.body, c.text).to.include({ success: true, verified: false });
    expectRateLimited(await postFrom(stack.url, checker, '/check-login', { pin: pins[0] }));
  });

  it('checks of one PIN: a burst of 2, then 429 from any IP until Retry-After has passed', async function () {
    const reg = newRegistration();
    expect((await postFrom(stack.url, freshIp(), '/register-pin', reg)).status).to.equal(200);
    const ip = freshIp();
    for (let i = 0; i < 2; i++) expect((await postFrom(stack.url, ip, '/check-login', { pin: reg.pin })).status).to.equal(200);
    const limited = await postFrom(stack.url, ip, '/check-login', { pin: reg.pin });
    expectRateLimited(limited);
    expectRateLimited(await postFrom(stack.url, freshIp(), '/check-login', { pin: reg.pin }));
    await sleep(Number(limited.headers.get('retry-after')) * 1000 + 100);
    const later = await postFrom(stack.url, ip, '/check-login', { pin: reg.pin });
    expect(later.body, later.text).to.include({ success: true, verified: false });
  });

  /** Spends a fresh IP's wrong-guess budget with `spend`; then a correct PIN is refused there and still pending elsewhere. */
  async function expectGuessBudgetSpentBy(spend: (guesser: string, victimPin: string) => Promise<void>): Promise<void> {
    const victim = newRegistration();
    expect((await postFrom(stack.url, freshIp(), '/register-pin', victim)).status).to.equal(200);
    const guesser = freshIp();
    await spend(guesser, victim.pin);
    const correct = await postFrom(stack.url, guesser, '/check-login', { pin: victim.pin });
    expectRateLimited(correct);
    expect(Number(correct.headers.get('retry-after'))).to.be.within(1, 600);
    const elsewhere = await postFrom(stack.url, freshIp(), '/check-login', { pin: victim.pin });
    expect(elsewhere.body, elsewhere.text).to.include({ success: true, verified: false });
  }

  it(`unknown PINs: ${D.unknown} per 10 minutes per IP; after that even a correct PIN gets 429 from that IP`, () =>
    expectGuessBudgetSpentBy(async (guesser) => {
      for (let i = 0; i < D.unknown; i++) {
        const r = await postFrom(stack.url, guesser, '/check-login', { pin: randomPin() });
        expect(r.body.error, r.text).to.equal('PIN_NOT_FOUND');
      }
      expectRateLimited(await postFrom(stack.url, guesser, '/check-login', { pin: randomPin() }));
    }));

  it(`register-pin naming a held PIN answers a decoy (no oracle), capped by the ${D.register}-a-minute registration budget`, async function () {
    const victim = newRegistration();
    const real = await postFrom(stack.url, freshIp(), '/register-pin', victim);
    expect(real.status).to.equal(200);
    const guesser = freshIp();
    for (let i = 0; i < D.register; i++) {
      const r = await postFrom(stack.url, guesser, '/register-pin', { pin: victim.pin, emojiString: randomEmoji() });
      expect(r.body, r.text).to.include({ success: true, message: 'PIN registered', expiresIn: 180 });
      expect(r.body.pinId).to.not.equal(real.body.pinId);
    }
    expectRateLimited(await postFrom(stack.url, guesser, '/register-pin', { pin: victim.pin, emojiString: randomEmoji() }));
    // the decoys took nothing: the registration is intact, its string still its own
    const again = await postFrom(stack.url, freshIp(), '/register-pin', victim);
    expect(again.body).to.include({ pinId: real.body.pinId, message: 'PIN already registered' });
  });

  it('socket cancel-auth of unknown PINs spends the same budget (no guessing by cancelling)', () =>
    expectGuessBudgetSpentBy(async (guesser, victimPin) => {
      // three connections, so the per-connection event budget is not what stops the guesses
      const sockets = await Promise.all([1, 2, 3].map(() => connectSocket(stack.url, guesser)));
      const cancel = async (socket: Socket, pin: string): Promise<string | undefined> =>
        ((await socket.timeout(5000).emitWithAck('cancel-auth', { pin })) as { error?: string }).error;
      try {
        for (let i = 0; i < D.unknown; i++) expect(await cancel(sockets[i % 2]!, randomPin())).to.equal('PIN_NOT_FOUND');
        expect(await cancel(sockets[2]!, victimPin)).to.equal('RATE_LIMITED');
      } finally {
        for (const s of sockets) s.close();
      }
    }));

  it(`send-message: ${D.send} a minute per user, from any IP`, async function () {
    const login = await loginFrom(stack.url, freshIp());
    const ip = freshIp();
    const send = (from: string) => postFrom(stack.url, from, '/send-message', { phoneNumber: randomPhone(), message: 'hello' }, login.token);
    const sent = await Promise.all(Array.from({ length: D.send }, () => send(ip)));
    for (const s of sent) expect(s.status, s.text).to.equal(200);
    expectRateLimited(await send(ip));
    expectRateLimited(await send(freshIp()));
  });

  it(`chat replies: at most ${D.reply} a minute to one phone, however many messages it sends`, async function () {
    const phone = randomPhone();
    const messages = D.reply + 3;
    for (let i = 0; i < messages; i++) {
      const r = await sendChat(stack.url, `PIN: ${randomEmoji()}`, { phone });
      expect(r.status, r.text).to.equal(200);
    }
    await queuesIdle(stack.prefix);
    const toPhone = gateway.requests.filter((r) => (r.json as { number?: string } | null)?.number === phone.slice(1));
    expect(toPhone).to.have.length(D.reply);
  });

  it(`socket events: ${D.socket} a second per connection, answered RATE_LIMITED; other connections unaffected`, async function () {
    const ip = freshIp();
    const [busy, quiet] = await Promise.all([connectSocket(stack.url, ip), connectSocket(stack.url, ip)]);
    const ask = (s: Socket) => s.timeout(5000).emitWithAck('cancel-auth', { pin: randomPin() }) as Promise<{ error?: string }>;
    try {
      // one burst spans at most two one-second windows
      const answers = await Promise.all(Array.from({ length: D.socket * 3 }, () => ask(busy)));
      const limited = answers.filter((a) => a.error === 'RATE_LIMITED').length;
      expect(limited).to.be.at.least(D.socket);
      for (const a of answers) if (a.error !== 'RATE_LIMITED') expect(a.error).to.equal('PIN_NOT_FOUND');
      expect((await ask(quiet)).error).to.equal('PIN_NOT_FOUND');
    } finally {
      busy.close();
      quiet.close();
    }
  });

  describe('client IP', function () {
    it('with TRUST_PROXY the last X-Forwarded-For hop is the client: spoofed earlier hops share its budget', async function () {
      const client = freshIp();
      const spoofed = (): string => `${freshIp()}, ${client}`;
      for (let i = 0; i < D.register; i++) {
        const r = await postFrom(stack.url, spoofed(), '/register-pin', newRegistration());
        expect(r.status, r.text).to.equal(200);
      }
      expectRateLimited(await postFrom(stack.url, spoofed(), '/register-pin', newRegistration()));
    });

    it('without TRUST_PROXY a spoofed X-Forwarded-For is ignored and cannot dodge the IP limit', async function () {
      for (let i = 0; i < D.register; i++) {
        const r = await postFrom(untrusted.url, freshIp(), '/register-pin', newRegistration());
        expect(r.status, r.text).to.equal(200);
      }
      expectRateLimited(await postFrom(untrusted.url, freshIp(), '/register-pin', newRegistration()));
      const plain = await request(untrusted.url, 'POST', '/register-pin', { json: newRegistration() });
      expectRateLimited(plain);
    });
  });
});
