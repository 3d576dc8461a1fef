import { expect } from 'chai';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { WebhookAuth } from '../../src/messaging/webhook-auth.js';
import { keys as makeKeys } from '../../src/redis/keys.js';
import { OTHER_FAULT_ATTEMPTS } from '../../src/queues/inbound-retry.js';
import { evolutionJobId, stackQueue } from '../core/support.js';
import { evolutionMessage, outboundOf, startMockGateway, type MockGateway } from '../helpers/gateway.js';
import { eventually, post, request } from '../helpers/http.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { runNode, startStack, type Stack } from '../helpers/processes.js';
import { randomPhone } from '../helpers/flow.js';
import { collectLogin, registerPin, sample, scrape } from '../ops/support.js';
import { rawStackLines } from './support.js';

const SECRET = 'inbound-outage-webhook-secret-of-32-bytes';
const TOKEN = 'inbound-outage-metrics-token-of-32-bytes-or-more';
/** the PINs' lifetime; the second three are registered LATER_MS after the first, so they outlive the outage by as much */
const PIN_TTL_SECONDS = 20;
const LATER_MS = 8_000;
/** production, with the waits shrunk so the suite takes seconds, not the minutes an operator's outage would */
const ENV = {
  NODE_ENV: 'production',
  JWT_SECRET: 'inbound-outage-production-like-secret-0123456789',
  WEBHOOK_SECRET: SECRET,
  METRICS_TOKEN: TOKEN,
  METRICS_INTERVAL_MS: '500',
  INBOUND_RETRY_MAX_MS: '300',
  PIN_TTL_SECONDS: String(PIN_TTL_SECONDS),
};

interface Person {
  pin: string;
  emoji: string;
  phone: string;
  rawId: string;
}

/**
 * An accepted webhook ends in one login or one reply, however long Redis refuses writes: a
 * private redis-server (noeviction) is made to refuse every write (`maxmemory 1`) for longer
 * than the old retry budget of a login job (10 attempts), while accepted chat messages are
 * being retried. When it takes writes again, the person whose PIN is still valid signs in,
 * the person whose PIN expired meanwhile is told so in the chat, each exactly once. A job that
 * fails for good for a fault other than Redis is counted, logged, and brought back by the
 * replay command.
 */
describe('faults: inbound work outlives a Redis that refuses writes (out of memory)', function () {
  this.timeout(120000);
  let redis: PrivateRedis;
  let admin: Redis;
  let gw: MockGateway;
  let stack: Stack;
  let inbound: Queue;

  before(async function () {
    redis = await PrivateRedis.start(['--maxmemory-policy', 'noeviction']);
    admin = redis.client();
    gw = await startMockGateway();
    stack = await startStack({
      name: 'faults-inbound-outage',
      env: {
        ...ENV,
        REDIS_URL: redis.url,
        MESSAGING_PROVIDER: 'evolution',
        EVOLUTION_API_URL: gw.url,
        EVOLUTION_API_KEY: 'evo-key',
        EVOLUTION_INSTANCE: 'test-instance',
      },
    });
    inbound = stackQueue(stack.prefix, 'inbound', redis.url);
  });
  after(async function () {
    await admin?.config('SET', 'maxmemory', '0').catch(() => undefined);
    await inbound?.close();
    admin?.disconnect();
    await stack?.stop();
    await gw?.close();
    await redis?.kill();
  });

  const keys = () => makeKeys(stack.prefix);
  const jobOf = (p: Person) => inbound.getJob(evolutionJobId('test-instance', p.rawId));
  const repliesTo = (p: Person): string[] =>
    gw.requests
      .map(outboundOf)
      .filter((o) => o.to === p.phone.replace(/^\+/, ''))
      .map((o) => String(o.text));
  const newPerson = async (): Promise<Person> => {
    const { pin, emoji } = await registerPin(stack.url);
    return { pin, emoji, phone: randomPhone(), rawId: `OOM${Math.random().toString(36).slice(2, 12).toUpperCase()}` };
  };
  /** the phone's index made the wrong type: the login script fails on it (a fault that is not Redis') */
  const breakPhone = (p: Person) => admin.hset(keys().userByPhone(p.phone), 'broken', '1');
  const mendPhone = (p: Person) => admin.del(keys().userByPhone(p.phone));
  const sendCode = async (p: Person): Promise<void> => {
    const raw = JSON.stringify(evolutionMessage({ text: `PIN: ${p.emoji}`, phone: p.phone, id: p.rawId }));
    const headers = { 'content-type': 'application/json', 'x-hub-signature-256': WebhookAuth.sign(raw, SECRET) };
    const r = await request(stack.url, 'POST', '/messaging-endpoint', { raw, headers });
    expect(r.status, r.text).to.equal(200);
  };

  it('a write refusal longer than the old retry budget: the valid PIN signs in, the expired one hears so, once each', async function () {
    // these PINs will expire while Redis refuses writes; those registered LATER_MS later will not
    const expiring = [await newPerson(), await newPerson(), await newPerson()];
    const registeredAt = Date.now();
    await new Promise((r) => setTimeout(r, LATER_MS));
    const lasting = [await newPerson(), await newPerson(), await newPerson()];
    const everyone = [...expiring, ...lasting];

    // every job fails its first attempt (a job already retrying when the outage starts, as under
    // real memory pressure, where writes fail on and off), then Redis refuses every write
    for (const p of everyone) await breakPhone(p);
    for (const p of everyone) await sendCode(p);
    await eventually(async () => ((await Promise.all(everyone.map(jobOf))).every((j) => (j?.attemptsMade ?? 0) >= 1) ? true : undefined), 10000, 20);
    await admin.config('SET', 'maxmemory', '1');
    const oomFrom = Date.now();
    for (const p of everyone) await mendPhone(p); // DEL is allowed out of memory

    // out of memory until the first PINs have expired, and past the old budget of 10 attempts
    await eventually(
      async () => {
        const attempts = (await Promise.all(everyone.map(jobOf))).map((j) => j?.attemptsMade ?? 0);
        return Math.min(...attempts) > 2 * OTHER_FAULT_ATTEMPTS && Date.now() > registeredAt + PIN_TTL_SECONDS * 1000 + 1000 ? true : undefined;
      },
      60000,
      200,
    );
    const attempts = (await Promise.all(everyone.map(jobOf))).map((j) => j?.attemptsMade ?? 0);
    expect((await inbound.getJobCounts('failed')).failed ?? 0, 'no job gave up while Redis refused writes').to.equal(0);
    expect(repliesTo(everyone[0]!), 'nothing answered during the outage').to.deep.equal([]);
    await admin.config('SET', 'maxmemory', '0');
    const oomSeconds = (Date.now() - oomFrom) / 1000;

    for (const p of lasting) {
      const login = await collectLogin(stack.url, p.pin, 20000);
      expect(login.user.phone).to.equal(p.phone);
    }
    for (const p of expiring) {
      const r = await post(stack.url, '/check-login', { pin: p.pin });
      expect(r.status, r.text).to.equal(410);
      expect(r.body.error).to.equal('PIN_EXPIRED');
    }
    await eventually(async () => (everyone.every((p) => repliesTo(p).length >= 1) ? true : undefined), 20000, 100);
    // settled: nothing more is on its way
    await eventually(async () => (((await inbound.getJobCounts('completed')).completed ?? 0) >= everyone.length ? true : undefined), 20000, 100);
    await new Promise((r) => setTimeout(r, 1000));
    for (const p of lasting) {
      const replies = repliesTo(p);
      expect(replies, p.phone).to.have.length(1);
      expect(replies[0], p.phone).to.match(/^You're signed in/);
    }
    for (const p of expiring) expect(repliesTo(p), p.phone).to.deep.equal(['That code is unknown or has expired. Please request a new one in the app.']);
    // one user, one session per person who signed in
    for (const p of lasting) {
      const uid = await admin.get(keys().userByPhone(p.phone));
      expect(await admin.zcard(keys().userSessions(String(uid))), p.phone).to.equal(1);
    }
    expect((await inbound.getJobCounts('failed')).failed ?? 0).to.equal(0);
    // eslint-disable-next-line no-console
    console.log(`      out of memory ${oomSeconds.toFixed(1)} s; attempts per job ${Math.min(...attempts)}-${Math.max(...attempts)} (old budget: 10)`);
  });

  it('a job failed for good (not a Redis fault) is counted and logged, and the replay command brings it back', async function () {
    const p = await newPerson();
    await breakPhone(p);
    await sendCode(p);
    await eventually(async () => ((await jobOf(p))?.failedReason ? ((await jobOf(p))!.finishedOn ? true : undefined) : undefined), 30000, 100);
    const failed = await jobOf(p);
    expect(await failed!.getState()).to.equal('failed');
    expect(failed!.attemptsMade).to.equal(OTHER_FAULT_ATTEMPTS);
    await eventually(async () => (sample(await scrape(stack.url, `Bearer ${TOKEN}`), 'pinauth_inbound_failed_total') >= 1 ? true : undefined), 10000, 200);
    const metrics = await scrape(stack.url, `Bearer ${TOKEN}`);
    expect(sample(metrics, 'pinauth_queue_jobs', { queue: 'inbound', state: 'failed' })).to.equal(1);
    expect(stack.workers[0]!.output()).to.match(/inbound message failed for good; replay with `npm run replay-inbound`/);
    expect(repliesTo(p)).to.deep.equal([]);

    // the operator fixes the cause, then replays
    await mendPhone(p);
    // a dry run counts it and changes nothing
    const dry = await runNode(['dist/src/bin/replay-inbound.js', '--dry-run'], { ...ENV, REDIS_URL: redis.url, KEY_PREFIX: stack.prefix });
    expect(dry.code, dry.stderr).to.equal(0);
    expect(dry.stdout).to.include(`dry run: nothing is changed): redis ${redis.url}, KEY_PREFIX ${stack.prefix}`);
    expect(dry.stdout).to.match(/^inbound: 1 failed job would be replayed$/m);
    expect(sample(await scrape(stack.url, `Bearer ${TOKEN}`), 'pinauth_queue_jobs', { queue: 'inbound', state: 'failed' })).to.equal(1);
    const replay = await runNode(['dist/src/bin/replay-inbound.js'], { ...ENV, REDIS_URL: redis.url, KEY_PREFIX: stack.prefix });
    expect(replay.code, replay.stderr).to.equal(0);
    expect(replay.stdout).to.match(/^inbound: 1 failed job replayed$/m);
    const login = await collectLogin(stack.url, p.pin, 20000);
    expect(login.user.phone).to.equal(p.phone);
    await eventually(async () => (repliesTo(p).length === 1 ? true : undefined), 10000, 100);
    expect(sample(await scrape(stack.url, `Bearer ${TOKEN}`), 'pinauth_queue_jobs', { queue: 'inbound', state: 'failed' })).to.equal(0);
    // a second replay finds nothing
    const again = await runNode(['dist/src/bin/replay-inbound.js'], { ...ENV, REDIS_URL: redis.url, KEY_PREFIX: stack.prefix });
    expect(again.stdout).to.match(/^0 in all$/m);
  });

  it('no process printed a stack trace or an unhandled rejection', function () {
    const output = [...stack.webs, ...stack.workers].map((w) => w.output()).join('\n');
    expect(rawStackLines(output)).to.deep.equal([]);
    expect(output).not.to.match(/unhandled rejection/);
  });
});
