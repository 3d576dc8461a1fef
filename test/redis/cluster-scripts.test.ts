import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Cluster, Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { DeliveryTracker } from '../../src/messaging/delivery.js';
import { createLogger } from '../../src/observability/logger.js';
import type { InboundJob } from '../../src/queues/jobs.js';
import { endFailedLogin } from '../../src/queues/workers/inbound.js';
import { sweepBucket } from '../../src/queues/workers/expiry.js';
import { connect, type RedisClient } from '../../src/redis/connection.js';
import { keys as keySchema } from '../../src/redis/keys.js';
import { Scripts } from '../../src/redis/scripts.js';
import {
  cancelCleanup,
  cancelFind,
  check as checkFlow,
  register as registerFlow,
  type RegisterRequest,
  type RegisterResult,
} from '../../src/registrations/steps.js';
import { Limits } from '../../src/security/limits.js';
import { eventually } from '../helpers/http.js';
import { ClusterTopology } from '../helpers/redis-topology.js';

/**
 * The ported scripts on a real 3-primary cluster: every call is routed by its declared keys and
 * touches one slot; requests whose keys live on several shards run as a sequence of calls
 * (registrations/steps.ts). Each test checks the answers and what Redis holds after, and where a request
 * has several steps, that a crash between them leaves what a retry finishes.
 */
describe('redis: the ported scripts on a 3-primary cluster', function () {
  this.timeout(90000);
  let topo: ClusterTopology | undefined;
  let c: RedisClient;
  let scripts: Scripts;
  let limits: Limits;
  const keys = keySchema('cs');
  const config = () => loadConfig({ ...topo!.env(), KEY_PREFIX: 'cs' });
  const pinHash = (): string => randomBytes(16).toString('base64url').slice(0, 22);
  const emoji = (): string => randomBytes(16).toString('base64url').slice(0, 22);
  const slot = async (key: string): Promise<number> => Number(await (c as Cluster).call('CLUSTER', 'KEYSLOT', key));
  const request = (h: string, e: string, over: Partial<RegisterRequest> = {}): RegisterRequest => ({
    pinHash: h,
    emojiHash: e,
    mode: 'client',
    newPinId: `id-${h.slice(0, 6)}`,
    ttlMs: 60_000,
    memoryMs: 60_000,
    origin: 'test\n127.0.0.x',
    candidates: [],
    ...over,
  });
  const register = (group: string, r: RegisterRequest) => registerFlow(scripts, keys, limits.forRegister(group), r);
  const check = (group: string, h: string) => checkFlow(scripts, keys, limits.forCheck(group, h), h, 0);
  const answer = (out: RegisterResult) => {
    if (out.kind !== 'answer') throw new Error(`no answer: ${out.kind}`);
    return out;
  };

  before(async function () {
    topo = await ClusterTopology.start({ primaries: 3 });
    c = connect(config().redis, 'worker', 'test:cluster-scripts');
    await eventually(async () => (c.status === 'ready' ? true : undefined), 10000);
    scripts = new Scripts(c);
    const cfg = config().rateLimits;
    limits = new Limits(c as unknown as Redis, keys, { ...cfg, unknownPinPer10Minutes: 5, registerPerMinute: 1000, checkPerMinute: 1000, checkPinBurst: 5 });
  });
  after(async function () {
    c?.disconnect();
    await topo?.stop();
  });

  it('a check spans slots (so it is a sequence of calls): one script on keys of two slots is refused (CROSSSLOT)', async function () {
    const h = pinHash();
    const b = limits.forCheck('g-split', h);
    const slots = new Set(await Promise.all([...b.groupKeys, keys.registration(h), ...b.pinKeys].map(slot)));
    expect(slots.size, 'the IP group and the registration hash to different slots').to.be.greaterThan(1);
    let err: unknown;
    await scripts.run('budget-take', [b.groupKeys[0]!, keys.registration(h)], [2, 10, 60_000, 't', 1, 10, 60_000, 't', 2]).catch((e: unknown) => (err = e));
    expect(String(err)).to.match(/CROSSSLOT|different slots|cross slot/i);
  });

  it('register: created, existing for the holder, a decoy for anyone else; a contested string; a server draw', async function () {
    const h = pinHash();
    const e = emoji();
    const created = answer(await register('g-reg', request(h, e)));
    expect(created.outcome).to.equal('created');
    expect(await c.hget(keys.registration(h), 'state')).to.equal('pending');
    expect(await c.get(keys.emoji(e))).to.equal(h);
    expect(await c.zscore(keys.active(keys.activeBucket(h)), h)).to.equal(String(created.expiresAt));
    expect(answer(await register('g-reg', request(h, e))).outcome).to.equal('existing');
    const decoy = answer(await register('g-reg', request(h, emoji())));
    expect(decoy.outcome).to.equal('decoy');
    expect(await c.hget(keys.registration(h), 'pinId'), 'a decoy stores nothing').to.equal(created.pinId);
    // another PIN choosing the same string: stored, the string contested
    const h2 = pinHash();
    expect(answer(await register('g-reg', request(h2, e))).outcome).to.equal('contested');
    expect(await c.get(keys.emoji(e))).to.equal('!');
    // server draw: the first candidate is taken, the second is held
    const taken = emoji();
    const free = emoji();
    await c.set(keys.emoji(taken), 'someone', 'PX', 60_000);
    const h3 = pinHash();
    const drawn = answer(await register('g-reg', request(h3, '', { mode: 'server', candidates: [taken, free] })));
    expect(drawn.outcome).to.equal('created');
    expect(drawn.candidateIndex, 'the second candidate').to.equal(2);
    expect(await c.get(keys.emoji(free))).to.equal(h3);
    expect(await c.hget(keys.registration(h3), 'emojiHash')).to.equal(free);
    // every candidate taken: retry, and nothing written
    const h4 = pinHash();
    expect(await register('g-reg', request(h4, '', { mode: 'server', candidates: [taken] }))).to.deep.equal({ kind: 'retry' });
    expect(await c.exists(keys.registration(h4))).to.equal(0);
  });

  it("register with an Idempotency-Key: the retry finds its registration (a later round's candidate too); a stranger's decoy is remembered on the registration's slot", async function () {
    const h = pinHash();
    const [taken, first, second] = [emoji(), emoji(), emoji()];
    await c.set(keys.emoji(taken), 'someone', 'PX', 60_000);
    const attempt = { tag: 'attempt-tag-1', candidates: [taken, first, second] };
    // round two's candidate is taken after round one's only candidate was held by someone else
    expect(await register('g-key', request(h, '', { mode: 'server', candidates: [taken], attempt }))).to.deep.equal({ kind: 'retry' });
    const made = answer(await register('g-key', request(h, '', { mode: 'server', candidates: [first], candidateOffset: 1, attempt })));
    expect([made.outcome, made.candidateIndex]).to.deep.equal(['created', 2]);
    // the retry starts over from round one: it recognises the candidate of round two
    const retry = answer(await register('g-key', request(h, '', { mode: 'server', candidates: [taken], attempt, newPinId: 'other-id' })));
    expect([retry.outcome, retry.pinId, retry.candidateIndex]).to.deep.equal(['existing', made.pinId, 2]);
    // another key: a decoy, remembered under a key of the registration's slot; its repeat is 'again'
    const stranger = { tag: 'attempt-tag-2', candidates: [emoji()] };
    const decoy = answer(await register('g-key', request(h, '', { mode: 'server', candidates: stranger.candidates, attempt: stranger, newPinId: 'decoy-id' })));
    expect(decoy.outcome).to.equal('decoy');
    expect(await slot(keys.attemptDecoy(h, stranger.tag))).to.equal(await slot(keys.registration(h)));
    const again = answer(
      await register('g-key', request(h, '', { mode: 'server', candidates: stranger.candidates, attempt: stranger, newPinId: 'decoy-id-2' })),
    );
    expect([again.outcome, again.pinId, again.candidateIndex]).to.deep.equal(['again', 'decoy-id', 1]);
    expect(await c.hget(keys.registration(h), 'pinId'), 'decoys store nothing on the registration').to.equal(made.pinId);
  });

  it('register: a crash after the emoji string is held leaves what the client’s retry finishes', async function () {
    const h = pinHash();
    const e = emoji();
    // budgets, read, emoji: then the process dies
    const b = limits.forRegister('g-crash');
    await scripts.run('budget-take', b.groupKeys, b.groupArgs);
    const read = await scripts.run('register', [keys.registration(h)], ['read', e, 'client', 'id-crash', 60_000, 60_000, 'o', '']);
    expect(read.kind).to.equal('create');
    expect(await scripts.run('emoji-hold', [keys.emoji(e)], [h, 'own', Date.now() + 60_000])).to.equal('created');
    expect(await c.get(keys.emoji(e))).to.equal(h);
    expect(await c.exists(keys.registration(h))).to.equal(0);
    const retried = answer(await register('g-crash', request(h, e)));
    expect(retried.outcome, 'the string it holds is its own: created, not contested').to.equal('created');
    expect(await c.hget(keys.registration(h), 'emojiHash')).to.equal(e);
    expect((await check('g-crash', h)).kind).to.equal('pending');
  });

  it('check: the wrong-guess budget holds under concurrency across shards; found PINs spend none of it', async function () {
    const outs = await Promise.all(Array.from({ length: 20 }, () => check('g-guess', pinHash()).then((o) => o.kind)));
    expect(outs.filter((o) => o === 'not_found')).to.have.length(5);
    expect(outs.filter((o) => o === 'limited')).to.have.length(15);
    const h = pinHash();
    expect(answer(await register('g-found', request(h, emoji()))).outcome).to.equal('created');
    for (let i = 0; i < 3; i++) expect((await check('g-found', h)).kind).to.equal('pending');
    expect(await c.exists(keys.groupBudget('unknownpin', 'g-found')), 'reserved, then given back').to.equal(0);
    expect(await c.get(keys.groupBudget('check', 'g-found'))).to.equal('3');
    expect(await c.get(keys.pinBudget('checkpin', h))).to.equal('3');
    // a crash after budget-take: the reserved wrong-guess point stays until its window ends, nothing else
    const h2 = pinHash();
    await register('g-found', request(h2, emoji()));
    const b = limits.forCheck('g-found', h2);
    await scripts.run('budget-take', b.groupKeys, b.groupArgs);
    expect(await c.get(keys.groupBudget('unknownpin', 'g-found'))).to.equal('1');
    expect((await check('g-found', h2)).kind).to.equal('pending');
    expect(await c.get(keys.groupBudget('unknownpin', 'g-found'))).to.equal('1');
  });

  it('cancel: frees the string, leaves the bucket, deletes the registration; a crash midway is finished by the retry', async function () {
    const cancel = async (h: string): Promise<string> => {
      const out = await cancelFind(scripts, keys, limits.forCancel('g-cancel'), h);
      if (out.kind !== 'cancelled') return out.kind;
      return cancelCleanup(scripts, keys, h, out);
    };
    const h = pinHash();
    const e = emoji();
    await register('g-cancel', request(h, e));
    expect(await cancel(h)).to.equal('cancelled');
    expect(await c.exists(keys.registration(h))).to.equal(0);
    expect(await c.exists(keys.emoji(e))).to.equal(0);
    expect(await c.zscore(keys.active(keys.activeBucket(h)), h)).to.equal(null);
    expect((await check('g-cancel', h)).kind).to.equal('not_found');
    // a login made and not collected: its session closes with the cancel; the process dies after
    // the first cleanup step, and the client's retry of the cancel finishes it
    const h2 = pinHash();
    const e2 = emoji();
    await register('g-cancel', request(h2, e2));
    const [uid, sid] = ['u1', 's1'];
    await c.hset(keys.registration(h2), 'state', 'claimed', 'messageId', 'msg1', 'userId', uid, 'sessionId', sid);
    await c.hset(keys.session(uid, sid), 'userId', uid, 'refreshJti', 'j1');
    await c.zadd(keys.userSessions(uid), Date.now() + 60_000, sid);
    const found = await cancelFind(scripts, keys, limits.forCancel('g-cancel'), h2);
    expect(found).to.deep.include({ kind: 'cancelled', sessionId: sid, userId: uid });
    // the first cleanup call (the emoji string freed), then the process dies
    await scripts.run('release', [keys.emoji(e2)], [h2]);
    expect(await c.exists(keys.emoji(e2))).to.equal(0);
    expect(await c.exists(keys.registration(h2)), 'the registration stays for the retry').to.equal(1);
    expect(await cancel(h2)).to.equal('cancelled');
    expect(await c.exists(keys.registration(h2))).to.equal(0);
    expect(await c.exists(keys.session(uid, sid))).to.equal(0);
    expect(await c.zcard(keys.userSessions(uid))).to.equal(0);
  });

  it('expiry sweep per bucket: announces each expired PIN once, even with two sweepers at once, and keeps the live ones', async function () {
    const hs = Array.from({ length: 12 }, () => pinHash());
    for (const h of hs) await register('g-sweep', request(h, emoji(), { ttlMs: 300 }));
    const live = pinHash();
    await register('g-sweep', request(live, emoji()));
    const buckets = [...new Set(hs.map((h) => keys.activeBucket(h)))];
    expect(buckets.length, 'the PINs spread over several buckets').to.be.greaterThan(2);
    await new Promise((r) => setTimeout(r, 500));
    const announced: string[] = [];
    for (const b of [...buckets, keys.activeBucket(live)]) {
      const [x, y] = await Promise.all([sweepBucket(scripts, keys, b, 0, 500), sweepBucket(scripts, keys, b, 0, 500)]);
      announced.push(...x.expired.map(([h]) => h), ...y.expired.map(([h]) => h));
    }
    expect([...announced].sort()).to.deep.equal([...hs].sort());
    expect(await c.zscore(keys.active(keys.activeBucket(live)), live)).to.not.equal(null);
    for (const h of hs) expect(await c.zscore(keys.active(keys.activeBucket(h)), h)).to.equal(null);
  });

  it('sessions on the user’s slot: rotate (again within the leeway, then reuse closes it), list, end one, end all', async function () {
    const uid = `u${randomBytes(4).toString('hex')}`;
    const now = Date.now();
    for (const sid of ['a', 'b', 'c']) {
      await c.hset(keys.session(uid, sid), 'userId', uid, 'refreshJti', `j-${sid}`, 'createdAt', now, 'lastUsedAt', now, 'origin', 'o');
      await c.zadd(keys.userSessions(uid), now + 60_000, sid);
    }
    await c.hset(keys.user(uid), 'id', uid, 'roles', '["user"]');
    const rotate = (sid: string, presented: string, next: string, roles = '["user"]') =>
      scripts.run(
        'rotate-session',
        [keys.session(uid, sid), keys.userSessions(uid), keys.rotation(uid, sid), keys.user(uid)],
        [sid, uid, presented, next, 60_000, `{"p":"${next}"}`, 5_000, roles],
      );
    // signed with roles the user no longer has: nothing rotated, the stored roles answered
    expect(await rotate('a', 'j-a', 'j-a1', '["admin"]')).to.deep.equal({ kind: 'roles', rolesJson: '["user"]' });
    expect(await rotate('a', 'j-a', 'j-a2')).to.deep.equal({ kind: 'ok' });
    expect(await rotate('a', 'j-a', 'j-a3')).to.deep.equal({ kind: 'again', pairJson: '{"p":"j-a2"}' });
    expect(await rotate('b', 'j-b', 'j-b2')).to.deep.equal({ kind: 'ok' });
    expect(await rotate('b', 'j-zz', 'j-b3')).to.deep.equal({ kind: 'reuse' });
    expect(await c.exists(keys.session(uid, 'b'))).to.equal(0);
    const listed = await scripts.run('list-sessions', [keys.userSessions(uid)], [keys.session(uid, ''), uid]);
    expect(listed.map((r) => r.sessionId).sort()).to.deep.equal(['a', 'c']);
    expect(await scripts.run('end-sessions', [keys.userSessions(uid)], [keys.session(uid, ''), uid, 'c'])).to.equal(1);
    expect(await scripts.run('end-sessions', [keys.userSessions(uid)], [keys.session(uid, ''), uid, '*'])).to.equal(1);
    expect(await c.exists(keys.session(uid, 'a'), keys.session(uid, 'c'), keys.userSessions(uid))).to.equal(0);
    await c.del(keys.user(uid));
    expect(await rotate('a', 'j-a2', 'j-a4')).to.deep.equal({ kind: 'nouser' });
  });

  it('delivery: statuses before the gateway id wait for it; a crash after the link loses none', async function () {
    const tracker = new DeliveryTracker(c as unknown as Redis, scripts, keys);
    const m = { owner: 'u1', kind: 'manual' as const, channel: 'cloud:1' };
    const run = async (job: string, gw: string, crash: boolean): Promise<void> => {
      await tracker.queued(job, m);
      expect(await tracker.status({ channel: m.channel, gatewayId: gw, status: 'delivered', at: Date.now() })).to.equal('unknown');
      expect(await slot(keys.outbound(job))).to.not.equal(await slot(keys.outboundByGateway(m.channel, gw)));
      if (crash) {
        // the link step alone: then the worker dies, and its retry tracks the send again
        await scripts.run('delivery-link', [keys.outboundByGateway(m.channel, gw), keys.outboundEarly(m.channel, gw)], [job, 600]);
        expect(await c.llen(keys.outboundEarly(m.channel, gw)), 'kept until applied').to.equal(1);
      }
      await tracker.sent(job, m, gw);
      expect(await c.exists(keys.outboundEarly(m.channel, gw))).to.equal(0);
      expect(await c.hget(keys.outbound(job), 'status')).to.equal('delivered');
      expect(await tracker.status({ channel: m.channel, gatewayId: gw, status: 'read', at: Date.now() })).to.equal('updated');
      expect(await tracker.status({ channel: m.channel, gatewayId: gw, status: 'sent', at: Date.now() })).to.equal('stale');
      const read = await tracker.read(job);
      expect(read?.owner).to.equal('u1');
      expect(read?.record.status).to.equal('read');
    };
    await run(`j${randomBytes(3).toString('hex')}`, `gw${randomBytes(3).toString('hex')}`, false);
    await run(`j${randomBytes(3).toString('hex')}`, `gw${randomBytes(3).toString('hex')}`, true);
  });

  it('fail-login: the message, the registration and the session (three slots) end in one clear state, also after a crash', async function () {
    const services = { keys, scripts, config: config(), log: createLogger({ level: 'error', production: false, role: 'test', instance: 't' }) };
    const failed: string[] = [];
    const notifier = { loginFailed: (h: string) => void failed.push(h) };
    const setUp = async () => {
      const h = pinHash();
      const [msg, nonce, uid, sid] = [`m${randomBytes(3).toString('hex')}`, 'n1', `u${randomBytes(3).toString('hex')}`, 's1'];
      await c.hset(
        keys.registration(h),
        'pinId',
        'pin1',
        'state',
        'claimed',
        'messageId',
        msg,
        'userId',
        uid,
        'sessionId',
        sid,
        'expiresAt',
        Date.now() + 60_000,
      );
      await c.set(keys.message(msg), `${nonce}|${h}|${sid}|${uid}`);
      await c.hset(keys.session(uid, sid), 'userId', uid);
      await c.zadd(keys.userSessions(uid), Date.now() + 60_000, sid);
      const job = { message: { id: msg }, nonce } as InboundJob;
      return { h, uid, sid, job };
    };
    const a = await setUp();
    expect(await endFailedLogin(services, notifier, a.job)).to.equal(true);
    expect(await c.hget(keys.registration(a.h), 'state')).to.equal('failed');
    expect(await c.exists(keys.session(a.uid, a.sid))).to.equal(0);
    expect(failed).to.deep.equal([a.h]);
    expect((await check('g-fail', a.h)).kind).to.equal('failed');
    // the registration marked, then the process dies before the session is closed: the retry closes it
    const b = await setUp();
    await scripts.run('fail-registration', [keys.registration(b.h)], [b.job.message.id, 60_000]);
    expect(await c.exists(keys.session(b.uid, b.sid))).to.equal(1);
    expect(await endFailedLogin(services, notifier, b.job), 'nothing new to tell').to.equal(false);
    expect(await c.exists(keys.session(b.uid, b.sid))).to.equal(0);
    expect(await c.hget(keys.registration(b.h), 'state')).to.equal('failed');
    // another delivery's job (another nonce) ends nothing
    const other = await setUp();
    expect(await endFailedLogin(services, notifier, { ...other.job, nonce: 'n2' })).to.equal(false);
    expect(await c.hget(keys.registration(other.h), 'state')).to.equal('claimed');
  });
});
