import { ACTIVE_BUCKETS, keys } from '../../src/redis/keys.js';
import { expect } from 'chai';
import type { Queue } from 'bullmq';
import { io, type Socket } from 'socket.io-client';
import { randomEmoji, randomPhone, randomPin, sendChat, type LoginBody } from '../helpers/flow.js';
import { activePinsAt, eventually, post } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { evolutionJobId, expectError, keysUnder, register, sleep, stackQueue } from './support.js';

const TTL = 2;

/** A registration's lifetime: PIN_TTL_SECONDS, then 410; a login made in time outlives it. */
describe('core: expiry', function () {
  let stack: InProcessStack;
  let expiry: Queue;
  let inbound: Queue;
  const sockets: Socket[] = [];
  before(async function () {
    stack = await startStack({
      inProcess: true,
      name: 'core-exp',
      webs: 1,
      workers: 1,
      env: { PIN_TTL_SECONDS: String(TTL), CHAT_REPLIES: 'false', ACTIVE_PINS_REFRESH_SECONDS: '0' },
    });
    expiry = stackQueue(stack.prefix, 'expiry');
    inbound = stackQueue(stack.prefix, 'inbound');
  });
  after(async function () {
    for (const s of sockets) s.disconnect();
    await expiry?.close();
    await inbound?.close();
    await stack?.stop();
  });

  const activePins = (): Promise<number> => activePinsAt(stack.url);
  /** Members of the active set, due or not (activePins counts only those not yet due). */
  const activeMembers = async (): Promise<number> => {
    const redis = testRedis();
    try {
      let n = 0;
      for (let b = 0; b < ACTIVE_BUCKETS; b++) n += await redis.zcard(keys(stack.prefix).active(b));
      return n;
    } finally {
      redis.disconnect();
    }
  };
  /** No expiry sweep is left to run (they are removed once complete). */
  const sweepsDone = (): Promise<true> =>
    eventually(async () => ((await expiry.getJobCountByTypes('delayed', 'waiting', 'active')) === 0 ? true : undefined), 10000);
  const connect = async (): Promise<Socket> => {
    const s = io(stack.url, { transports: ['websocket'], reconnection: false });
    sockets.push(s);
    await new Promise<void>((resolve, reject) => {
      s.once('connect', resolve);
      s.once('connect_error', reject);
    });
    return s;
  };
  const socketRegister = (s: Socket, pin: string, emojiString: string): Promise<{ success: boolean; pinId: string }> =>
    s.timeout(5000).emitWithAck('register-pin', { pin, emojiString });

  it('a pending PIN expires after PIN_TTL_SECONDS: 410 PIN_EXPIRED, remembered, activePins drops, its chat code matches nothing', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    const reg = await register(stack.url, pin, emoji);
    expect(reg.body.expiresIn).to.equal(TTL);
    expect(await activePins()).to.equal(1);
    expect((await post(stack.url, '/check-login', { pin })).body.verified).to.equal(false);
    await sleep(TTL * 1000 + 100);
    expectError(await post(stack.url, '/check-login', { pin }), 410, 'PIN_EXPIRED');
    expect(await activePins()).to.equal(0);
    const late = `LATE${randomPin().slice(4)}`;
    await sendChat(stack.url, `PIN: ${emoji}`, { phone: randomPhone(), id: late });
    await eventually(async () => ((await inbound.getJob(evolutionJobId('test-instance', late)))?.finishedOn ? true : undefined));
    expectError(await post(stack.url, '/check-login', { pin }), 410, 'PIN_EXPIRED');
  });

  it('re-registering reports the seconds left; after expiry the PIN and emoji string can be registered anew', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    const first = await register(stack.url, pin, emoji);
    await sleep(1100);
    const again = await register(stack.url, pin, emoji);
    expect(again.body.pinId).to.equal(first.body.pinId);
    expect(again.body.expiresIn).to.equal(1);
    await sleep(1000);
    const other = await register(stack.url, randomPin(), emoji);
    expect(other.status, other.text).to.equal(200);
    const anew = await register(stack.url, pin, randomEmoji());
    expect(anew.status, anew.text).to.equal(200);
    expect(anew.body.pinId).to.not.equal(first.body.pinId);
    expect((await post(stack.url, '/check-login', { pin })).body.verified).to.equal(false);
  });

  it('a login late in the lifetime stays collectable past it, for the grace period', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    await register(stack.url, pin, emoji);
    const ends = Date.now() + TTL * 1000;
    await sleep(1000);
    await sendChat(stack.url, `PIN: ${emoji}`, { phone: randomPhone() });
    // the login is stored, uncollected, for at least the grace period (60 s) past the lifetime
    const redis = testRedis();
    try {
      const ttl = await eventually(async () => {
        for (const k of await keysUnder(stack.prefix, 'reg:*')) if ((await redis.hget(k, 'state')) === 'verified') return redis.pttl(k);
        return undefined;
      });
      expect(ttl).to.be.greaterThan(55_000);
    } finally {
      redis.disconnect();
    }
    await sleep(ends + 200 - Date.now());
    const r = await post<LoginBody>(stack.url, '/check-login', { pin });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.verified).to.equal(true);
  });

  it('pin-expired reaches the registering socket with its PIN; a verified PIN gets none', async function () {
    const s = await connect();
    const events: { pin: string }[] = [];
    s.on('pin-expired', (e: { pin: string }) => events.push(e));
    const verified = { pin: randomPin(), emoji: randomEmoji() };
    const pending = { pin: randomPin(), emoji: randomEmoji() };
    const v = await socketRegister(s, verified.pin, verified.emoji);
    await socketRegister(s, pending.pin, pending.emoji);
    expect(v.success).to.equal(true);
    const success = new Promise((resolve) => s.once('auth-success', resolve));
    await sendChat(stack.url, `PIN: ${verified.emoji}`, { phone: randomPhone() });
    await success;
    await eventually(async () => (events.length > 0 ? true : undefined), 10000);
    // every sweep has run, the one covering the verified PIN's second included
    await sweepsDone();
    await sleep(300);
    expect(events).to.deep.equal([{ pin: pending.pin }]);
  });

  it('one sweep job per expiry second, not per registration; the sweep empties the active set', async function () {
    const n = 20;
    const regs = await Promise.all(Array.from({ length: n }, () => register(stack.url, randomPin(), randomEmoji())));
    for (const r of regs) expect(r.status, r.text).to.equal(200);
    const jobs = await expiry.getJobs(['delayed', 'waiting', 'active']);
    // the registrations may straddle a second boundary, hence up to two
    expect(jobs.length).to.be.within(1, 2);
    for (const j of jobs) expect(j.id).to.match(/^x-\d+$/);
    expect(await activePins()).to.equal(n);
    await sleep(TTL * 1000 + 100);
    expect(await activePins()).to.equal(0);
    await sweepsDone();
    expect(await activeMembers()).to.equal(0);
  });

  // last: it stops the suite's worker (and starts another)
  it('expires on time with no worker running: the Redis TTL is the truth; a worker started later announces it', async function () {
    await stack.workers.pop()!.stop();
    const s = await connect();
    const events: { pin: string }[] = [];
    s.on('pin-expired', (e: { pin: string }) => events.push(e));
    const pin = randomPin();
    const emoji = randomEmoji();
    expect((await socketRegister(s, pin, emoji)).success).to.equal(true);
    expect(await activePins()).to.equal(1);
    await sleep(TTL * 1000 + 100);
    expectError(await post(stack.url, '/check-login', { pin }), 410, 'PIN_EXPIRED');
    expect(await activePins()).to.equal(0);
    expect((await register(stack.url, randomPin(), emoji)).status).to.equal(200);
    // its second's sweep is overdue, but nothing runs it yet
    await sleep(1100);
    expect(events).to.deep.equal([]);
    await stack.addWorker();
    await eventually(async () => (events.length > 0 ? true : undefined), 10000);
    await sweepsDone();
    expect(events).to.deep.equal([{ pin }]);
    expect(await activeMembers()).to.equal(0);
  });
});
