import { expect } from 'chai';
import { randomEmoji, randomPhone, randomPin, sendChat, type LoginBody } from '../helpers/flow.js';
import { eventually, request, type JsonResponse } from '../helpers/http.js';
import { RELAXED_LIMITS, startStack, type InProcessNode, type InProcessStack } from '../helpers/processes.js';
import { freshIp, postFrom, queuesIdle } from './client.js';
import { expectError, expectRateLimited } from './expect-error.js';

/**
 * An attacker with nothing but HTTP access, addresses of its own (TRUST_PROXY=true, one
 * X-Forwarded-For per request) and a phone of its own, against two web nodes and a worker with
 * the service's default limits. It tries the PIN oracle, the emoji-string oracle and swap,
 * concurrent guess bursts and address rotation inside one IPv6 /64, and never gets a victim's
 * tokens or signs a victim into its own account.
 */
const SERVICE_DEFAULTS = Object.fromEntries(Object.keys(RELAXED_LIMITS).map((k) => [k, '']));
const GUESSES = 30; // RATE_UNKNOWN_PIN_PER_10_MINUTES
const REGISTRATIONS = 30; // RATE_REGISTER_PER_MINUTE
const METRICS_TOKEN = 'oracle-metrics-token-0123456789';

let v6Counter = 0;
/** A fresh IPv6 /64 (documentation range): returns a function giving addresses inside it. */
function fresh64(): (host: number) => string {
  v6Counter += 1;
  const net = `2001:db8:${(0x1000 + v6Counter).toString(16)}:${(v6Counter * 7).toString(16)}`;
  return (host) => `${net}:${(host >> 16).toString(16)}:${(host & 0xffff).toString(16)}:${((host * 31) % 0xffff).toString(16)}:1`;
}

/** Tallies answers by error code (`ok` for 200). */
function tally(answers: JsonResponse[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const k = a.status === 200 ? 'ok' : String(a.body.error);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

describe('security: an attacker script against the login ceremony (two web nodes, one worker)', function () {
  let stack: InProcessStack;
  /** a node of the same deployment that draws every emoji string and wants strong PINs (the production defaults) */
  let strict: InProcessNode;
  const attackerPhone = randomPhone();
  /** every login body any attacker request ever received */
  const stolen: LoginBody[] = [];
  const attackerPost = async (base: string, ip: string, path: string, json: unknown): Promise<JsonResponse> => {
    const r = await postFrom(base, ip, path, json);
    if (r.status === 200 && r.body.verified === true) stolen.push(r.body as unknown as LoginBody);
    return r;
  };

  before(async function () {
    stack = await startStack({
      inProcess: true,
      name: 'sec-oracle',
      webs: 2,
      workers: 1,
      env: { ...SERVICE_DEFAULTS, TRUST_PROXY: 'true', METRICS_TOKEN, METRICS_INTERVAL_MS: '200', LOG_LEVEL: 'info' },
    });
    strict = await stack.addWeb({ EMOJI_CHOICE: 'server', PIN_MIN_BITS: '64' });
  });
  after(async function () {
    // whatever it tried, the attacker never held a victim's tokens
    expect(stolen.filter((s) => s.user.phone !== attackerPhone)).to.deep.equal([]);
    await stack?.stop();
  });

  const [a, b] = [() => stack.webs[0]!.url, () => stack.webs[1]!.url];

  /** The victim: registers from its own address, sends its emoji string from its own phone, collects. */
  async function victimLogin(reg: { pin: string; emojiString: string }, phone: string, base = a()): Promise<LoginBody> {
    await sendChat(base, `PIN: ${reg.emojiString}`, { phone });
    return eventually(
      async () => {
        const c = await postFrom<LoginBody>(base, freshIp(), '/check-login', { pin: reg.pin });
        if (c.status === 429) return undefined;
        expect(c.status, c.text).to.equal(200);
        return c.body.verified ? c.body : undefined;
      },
      15000,
      1100,
    );
  }

  it('PIN oracle: registering a held PIN answers exactly like a fresh registration, and the victim still signs in as itself', async function () {
    const victim = { pin: randomPin(), emojiString: randomEmoji() };
    const victimPhone = randomPhone();
    const real = await postFrom(a(), freshIp(), '/register-pin', victim);
    expect(real.status).to.equal(200);
    const ip = freshIp();
    const probe = await attackerPost(b(), ip, '/register-pin', { pin: victim.pin, emojiString: randomEmoji() });
    const control = await attackerPost(b(), ip, '/register-pin', { pin: randomPin(), emojiString: randomEmoji() });
    for (const r of [probe, control]) {
      expect(r.status, r.text).to.equal(200);
      expect(Object.keys(r.body).sort()).to.deep.equal(['emojiString', 'expiresIn', 'message', 'pinId', 'success']);
      expect(r.body).to.include({ success: true, message: 'PIN registered', expiresIn: 180 });
      expect(String(r.body.pinId)).to.match(/^[A-Za-z0-9_-]{22}$/);
    }
    expect(probe.body.pinId).to.not.equal(real.body.pinId);
    // the attacker's string from the attacker's phone signs nobody in
    await sendChat(b(), `PIN: ${String(probe.body.emojiString)}`, { phone: attackerPhone });
    const login = await victimLogin(victim, victimPhone);
    expect(login.user.phone).to.equal(victimPhone);
  });

  it('PIN oracle on the strict node: a bare PIN gets a decoy with another drawn string; only the holder re-joins', async function () {
    const victimPin = randomPin();
    const mine = await postFrom(strict.url, freshIp(), '/register-pin', { pin: victimPin });
    expect(mine.status, mine.text).to.equal(200);
    const drawn = String(mine.body.emojiString);
    const ip = freshIp();
    const probe = await attackerPost(strict.url, ip, '/register-pin', { pin: victimPin });
    const control = await attackerPost(strict.url, ip, '/register-pin', { pin: randomPin() });
    for (const r of [probe, control]) {
      expect(r.body).to.include({ success: true, message: 'PIN registered', expiresIn: 180 });
      expect([...String(r.body.emojiString)]).to.have.length(8);
    }
    expect(probe.body.pinId).to.not.equal(mine.body.pinId);
    expect(probe.body.emojiString).to.not.equal(drawn);
    // a client-chosen string is refused alike for a free PIN and for a held one it does not match
    expectError(await attackerPost(strict.url, ip, '/register-pin', { pin: randomPin(), emojiString: randomEmoji() }), 'VALIDATION_ERROR');
    expectError(await attackerPost(strict.url, ip, '/register-pin', { pin: victimPin, emojiString: randomEmoji() }), 'VALIDATION_ERROR');
    // weak PINs are refused before anything is looked up
    const weak = await attackerPost(strict.url, ip, '/register-pin', { pin: '12345678' });
    expectError(weak, 'VALIDATION_ERROR');
    expect(weak.text).to.contain('pin');
    // the holder re-joins with the string it was given: same registration
    const rejoin = await postFrom(strict.url, freshIp(), '/register-pin', { pin: victimPin, emojiString: drawn });
    expect(rejoin.body).to.include({ pinId: mine.body.pinId, message: 'PIN already registered', emojiString: drawn });
  });

  it("PIN oracle with Idempotency-Keys (strict node): a keyed guess and its repeat answer exactly as a fresh attempt and its retry; only the holder's key finds its registration", async function () {
    const victimPin = randomPin();
    const victimKey = { 'idempotency-key': 'victim-attempt-1' };
    const mine = await request(strict.url, 'POST', '/register-pin', { json: { pin: victimPin }, headers: { ...victimKey, 'x-forwarded-for': freshIp() } });
    expect(mine.body, mine.text).to.include({ message: 'PIN registered' });
    const ip = freshIp();
    const keyed = (pin: string, key: string) =>
      request(strict.url, 'POST', '/register-pin', { json: { pin }, headers: { 'idempotency-key': key, 'x-forwarded-for': ip } });
    const probe = [await keyed(victimPin, 'guess-1'), await keyed(victimPin, 'guess-1')];
    const freePin = randomPin();
    const control = [await keyed(freePin, 'guess-1'), await keyed(freePin, 'guess-1')];
    for (const [first, repeat] of [probe, control]) {
      expect(first!.body).to.include({ success: true, message: 'PIN registered', expiresIn: 180 });
      expect(repeat!.body).to.include({ success: true, message: 'PIN already registered', pinId: first!.body.pinId, emojiString: first!.body.emojiString });
      expect(repeat!.body.expiresIn).to.be.within(170, 180);
      expect(Object.keys(repeat!.body).sort()).to.deep.equal(['emojiString', 'expiresIn', 'message', 'pinId', 'success']);
    }
    expect(probe[0]!.body.pinId).to.not.equal(mine.body.pinId);
    expect(probe[0]!.body.emojiString).to.not.equal(mine.body.emojiString);
    // the holder's retry (same key) gets its own registration
    const retry = await request(strict.url, 'POST', '/register-pin', { json: { pin: victimPin }, headers: { ...victimKey, 'x-forwarded-for': freshIp() } });
    expect(retry.body).to.include({ pinId: mine.body.pinId, emojiString: mine.body.emojiString, message: 'PIN already registered' });
  });

  it('emoji oracle and swap: registering a pending string reveals nothing, and sending it signs no victim into the attacker', async function () {
    const victims = Array.from({ length: 3 }, () => ({ pin: randomPin(), emojiString: randomEmoji(2) }));
    for (const v of victims) expect((await postFrom(a(), freshIp(), '/register-pin', v)).status).to.equal(200);
    const ip = freshIp();
    const attackerPins: string[] = [];
    for (const v of victims) {
      const pin = randomPin();
      attackerPins.push(pin);
      const probe = await attackerPost(b(), ip, '/register-pin', { pin, emojiString: v.emojiString });
      const control = await attackerPost(b(), ip, '/register-pin', { pin: randomPin(), emojiString: randomEmoji(8) });
      for (const r of [probe, control]) expect(r.body).to.include({ success: true, message: 'PIN registered', expiresIn: 180 });
      expect(probe.body.emojiString).to.equal(v.emojiString);
      // the swap: the attacker sends the victim's string from its own phone
      await sendChat(b(), `PIN: ${v.emojiString}`, { phone: attackerPhone });
    }
    await queuesIdle(stack.prefix);
    for (const pin of [...victims.map((v) => v.pin), ...attackerPins]) {
      const c = await attackerPost(a(), freshIp(), '/check-login', { pin });
      expect(c.body, c.text).to.include({ success: true, verified: false });
    }
  });

  it('emoji oracle on the strict node: the attacker cannot choose a string at all', async function () {
    const victim = await postFrom(strict.url, freshIp(), '/register-pin', { pin: randomPin() });
    const probe = await attackerPost(strict.url, freshIp(), '/register-pin', { pin: randomPin(), emojiString: String(victim.body.emojiString) });
    expectError(probe, 'VALIDATION_ERROR');
  });

  it(`concurrent guesses: 120 wrong check-login guesses at once across both nodes get exactly ${GUESSES} PIN_NOT_FOUND; then even a correct PIN is refused there`, async function () {
    const victim = { pin: randomPin(), emojiString: randomEmoji() };
    expect((await postFrom(a(), freshIp(), '/register-pin', victim)).status).to.equal(200);
    const ip = freshIp();
    const answers = await Promise.all(Array.from({ length: 120 }, (_, i) => attackerPost(i % 2 ? a() : b(), ip, '/check-login', { pin: randomPin() })));
    expect(tally(answers)).to.deep.equal({ PIN_NOT_FOUND: GUESSES, RATE_LIMITED: 120 - GUESSES });
    answers.filter((r) => r.status === 429).forEach(expectRateLimited);
    expectRateLimited(await attackerPost(a(), ip, '/check-login', { pin: victim.pin }));
  });

  it(`concurrent registrations: 45 at once from one address get exactly ${REGISTRATIONS} answers`, async function () {
    const ip = freshIp();
    const answers = await Promise.all(
      Array.from({ length: 45 }, (_, i) => attackerPost(i % 2 ? a() : b(), ip, '/register-pin', { pin: randomPin(), emojiString: randomEmoji(8) })),
    );
    expect(tally(answers)).to.deep.equal({ ok: REGISTRATIONS, RATE_LIMITED: 45 - REGISTRATIONS });
  });

  it('/64 rotation: every address of one IPv6 /64 shares one wrong-guess budget; another /64 has its own', async function () {
    const victim = { pin: randomPin(), emojiString: randomEmoji() };
    expect((await postFrom(a(), freshIp(), '/register-pin', victim)).status).to.equal(200);
    const net = fresh64();
    const answers: JsonResponse[] = [];
    for (let host = 1; host <= GUESSES; host++) answers.push(await attackerPost(host % 2 ? a() : b(), net(host), '/check-login', { pin: randomPin() }));
    expect(tally(answers)).to.deep.equal({ PIN_NOT_FOUND: GUESSES });
    expectRateLimited(await attackerPost(a(), net(9999), '/check-login', { pin: randomPin() }));
    expectRateLimited(await attackerPost(b(), net(123456), '/check-login', { pin: victim.pin }));
    const other = fresh64();
    expectError(await attackerPost(a(), other(1), '/check-login', { pin: randomPin() }), 'PIN_NOT_FOUND');
  });

  it('an IPv4-mapped IPv6 address is the IPv4 address: they share one budget', async function () {
    const ip = freshIp();
    for (let i = 0; i < GUESSES; i++) {
      const from = i % 2 ? ip : `::ffff:${ip}`;
      expectError(await attackerPost(a(), from, '/check-login', { pin: randomPin() }), 'PIN_NOT_FOUND');
    }
    expectRateLimited(await attackerPost(b(), ip, '/check-login', { pin: randomPin() }));
    expectRateLimited(await attackerPost(b(), `::ffff:${ip}`, '/check-login', { pin: randomPin() }));
  });

  it('the existing spec flow still signs in with {pin, emojiString} on the default node', async function () {
    const reg = { pin: randomPin(), emojiString: randomEmoji() };
    const r = await postFrom(a(), freshIp(), '/register-pin', reg);
    expect(r.body).to.include({ success: true, expiresIn: 180, emojiString: reg.emojiString });
    const phone = randomPhone();
    expect((await victimLogin(reg, phone, b())).user.phone).to.equal(phone);
  });

  it('the operator sees it: counters by bounded labels in /metrics, warn lines carrying the IP group', async function () {
    const net = fresh64();
    expectError(await attackerPost(a(), net(77), '/check-login', { pin: randomPin() }), 'PIN_NOT_FOUND');
    const group = `${/^(2001:db8:[0-9a-f]+:[0-9a-f]+)/.exec(net(1))![1]}::/64`;
    await stack.webs[0]!.waitForOutput(new RegExp(`warn: wrong PIN guess .*"ipGroup":"${group.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}"`));
    const sum = (text: string, pattern: RegExp): number =>
      text
        .split('\n')
        .filter((l) => pattern.test(l))
        .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    // everything this suite did, counted across both nodes (each node publishes its counts on its
    // own schedule, so the page is read until both have)
    const counts = (text: string) => ({
      wrongChecks: sum(text, /^pinauth_wrong_guesses_total\{action="check"/),
      guessLimited: sum(text, /^pinauth_rate_limited_total\{limit="guess"/),
      registerLimited: sum(text, /^pinauth_rate_limited_total\{limit="register"/),
      pinCollisions: sum(text, /^pinauth_registration_collisions_total\{kind="pin"/),
      emojiCollisions: sum(text, /^pinauth_registration_collisions_total\{kind="emoji"/),
    });
    const want = { wrongChecks: GUESSES * 3, guessLimited: 120 - GUESSES, registerLimited: 45 - REGISTRATIONS, pinCollisions: 2, emojiCollisions: 3 };
    const reached = (c: ReturnType<typeof counts>): boolean => (Object.keys(want) as (keyof typeof want)[]).every((k) => c[k] >= want[k]);
    let text = '';
    await eventually(async () => {
      text = (await request(a(), 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
      return reached(counts(text)) ? true : undefined;
    }).catch(() => undefined);
    const got = counts(text);
    for (const k of Object.keys(want) as (keyof typeof want)[]) expect(got[k], k).to.be.at.least(want[k]);
    // no address anywhere in the metrics
    expect(text).to.not.match(/198\.51\.|2001:db8/);
    expect(stack.webs.map((w) => w.output()).join('\n')).to.match(/warn: rate limited .*"limit":"guess"/);
  });
});
