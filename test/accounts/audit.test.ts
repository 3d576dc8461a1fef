import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Job } from 'bullmq';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { Scripts } from '../../src/redis/scripts.js';
import { type AuditRecord, type AuditType, AuditTrail } from '../../src/accounts/audit.js';
import { LoginProcessor } from '../../src/auth/login.js';
import { createApp } from '../../src/http/app.js';
import { createProcessMetrics } from '../../src/observability/metrics.js';
import type { InboundJob, InboundMessage } from '../../src/queues/jobs.js';
import { expiryProcessor } from '../../src/queues/workers/expiry.js';
import { inboundProcessor } from '../../src/queues/workers/inbound.js';
import { Notifier } from '../../src/realtime/notifier.js';
import { originOf } from '../../src/registrations/origin.js';
import type { Caller } from '../../src/registrations/service.js';
import type { Services } from '../../src/services.js';
import { adminLogin } from '../helpers/admin.js';
import { fullLogin, randomEmoji, randomPhone, randomPin } from '../helpers/flow.js';
import { startStack, stopProcess, type Stack } from '../helpers/processes.js';
import { ClusterTopology } from '../helpers/redis-topology.js';
import { ADMIN } from '../ops/support.js';
import { eventually, request } from '../helpers/http.js';
import { startServices, stopServices } from '../helpers/services.js';
import { openSse, type SseClient, type SseFrame } from '../helpers/sse.js';
import { TEST_JWT_SECRET } from '../core/support.js';

const CHROME = 'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36';
const caller: Caller = { ip: '203.0.113.7', via: 'http', origin: originOf(CHROME, '203.0.113.7') };

/** The audit trail (docs/accounts.md, "The audit trail"), in process on the shared Redis under a prefix of its own. */
describe('accounts: the audit trail', function () {
  let services: Services;
  before(async function () {
    services = await startServices('audit', { JWT_SECRET: TEST_JWT_SECRET });
  });
  after(async function () {
    await stopServices(services);
  });

  it('forUser reads a person through their index, newest first; forget removes what is about them and strips what they did', async function () {
    const audit = services.audit;
    const p = `p${Date.now()}`;
    const q = `q${Date.now()}`;
    await audit.record({ type: 'login.succeeded', userId: p, client: 'evolution:main', ipGroup: '203.0.113.0/24' });
    await audit.record({ type: 'login.succeeded', userId: q });
    await audit.record({
      type: 'account.roles-changed',
      userId: q,
      actor: { kind: 'admin', userId: p },
      ipGroup: '198.51.100.0/24',
      detail: { roles: 'user,admin' },
    });
    await audit.record({ type: 'key.created', actor: { kind: 'admin', userId: p }, detail: { keyId: 'k1' } });
    await audit.record({ type: 'chat.stop', userId: p });

    const mine = await audit.forUser(p, 10);
    expect(mine.map((e) => e.type)).to.deep.equal(['chat.stop', 'key.created', 'account.roles-changed', 'login.succeeded']);
    expect(await audit.forUser(p, 2)).to.have.length(2);
    const roleChange = mine[2]!;

    expect(await audit.forget(p)).to.equal(4);
    expect(await audit.forUser(p, 10)).to.deep.equal([]);
    expect(await services.redis.exists(services.keys.auditOfUser(p))).to.equal(0);
    // nothing in the stream names p any more; q's events stay, the one p did without p
    const all = await services.redis.xrange(services.keys.audit(), '-', '+');
    expect(JSON.stringify(all)).not.to.contain(p);
    const theirs = await audit.forUser(q, 10);
    expect(theirs.map((e) => e.type)).to.deep.equal(['account.roles-changed', 'login.succeeded']);
    expect(theirs[0]).to.include({ actor: 'erased', ipGroup: null, at: roleChange.at, userId: q });
    expect(theirs[0]!.detail).to.deep.equal({ roles: 'user,admin' });
    const keyCreated = (await audit.list({ types: ['key.created'] })).events;
    expect(keyCreated.map((e) => e.actor)).to.deep.equal(['erased']);
    // idempotent
    expect(await audit.forget(p)).to.equal(0);
  });

  it('pages a person by cursor and time without skipping events of the same millisecond', async function () {
    const audit = services.audit;
    const u = `c${Date.now()}`;
    for (let i = 0; i < 25; i++) await audit.record({ type: 'login.denied', userId: u, detail: { i } });
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await audit.list({ userId: u, limit: 7, cursor });
      seen.push(...page.events.map((e) => Number(e.detail.i)));
      if (page.next === null) break;
      cursor = page.next;
    }
    expect(seen).to.deep.equal([...Array(25).keys()].reverse());
    const first = (await audit.forUser(u, 25)).at(-1)!;
    const since = (await audit.list({ userId: u, since: Date.parse(first.at), limit: 200 })).events;
    expect(since.length).to.be.at.least(1);
    expect(await audit.list({ userId: u, until: Date.parse(first.at) - 1 })).to.deep.equal({ events: [], next: null });
    expect(await audit.forget(u)).to.equal(25);
  });

  it('an id trimmed from the stream leaves the index when it is met', async function () {
    const audit = new AuditTrail(services.redis, services.scripts, services.keys, { days: 1, maxEvents: 1000 });
    const u = `t${Date.now()}`;
    const id = await audit.record({ type: 'login.failed', userId: u });
    await services.redis.xdel(services.keys.audit(), id);
    expect(await audit.forUser(u)).to.deep.equal([]);
    expect(await services.redis.zcard(services.keys.auditOfUser(u))).to.equal(0);
  });

  it('retention: AUDIT_MAX_EVENTS keeps the newest that many, AUDIT_RETENTION_DAYS drops older events, in the stream and in the person index', async function () {
    const small = await startServices('audit-ret', { AUDIT_RETENTION_DAYS: '1', AUDIT_MAX_EVENTS: '1000' });
    try {
      const { audit, redis, keys: k } = small;
      const u = 'retained';
      // an event of two days ago, as an older version of the service would have left it
      const old = `${Date.now() - 2 * 86_400_000}-0`;
      await redis.xadd(k.audit(), old, 'type', 'login.succeeded', 'actor', 'system', 'userId', u);
      await redis.zadd(k.auditOfUser(u), 0, `${old.split('-')[0]!.padStart(16, '0')}-${'0'.padStart(10, '0')}`);
      // the next event recorded trims by time: the old one leaves the stream and the index
      const ids = [await audit.record({ type: 'login.denied', userId: u, detail: { i: 0 } })];
      expect((await redis.xrange(k.audit(), '-', '+')).map(([id]) => id)).to.deep.equal(ids);
      expect(await redis.zcard(k.auditOfUser(u))).to.equal(1);
      // then by count (a hundred at a time: one connection keeps them in order)
      for (let i = 1; i < 1010; i += 100) {
        const batch = [...Array(Math.min(100, 1010 - i)).keys()].map((j) => audit.record({ type: 'login.denied', userId: u, detail: { i: i + j } }));
        ids.push(...(await Promise.all(batch)));
      }
      expect(await redis.xlen(k.audit())).to.equal(1000);
      const [first] = await redis.xrange(k.audit(), '-', '+', 'COUNT', 1);
      expect(first![0], 'the oldest kept: the 11th recorded').to.equal(ids[10]);
      expect(await redis.zcard(k.auditOfUser(u))).to.equal(1000);
      const ttl = await redis.pttl(k.auditOfUser(u));
      expect(ttl).to.be.within(86_400_000 - 60_000, 86_400_000);
      const latest = await audit.forUser(u, 200);
      expect(latest[0]!.detail.i).to.equal(1009);
      // a page past the retained ones ends: nothing older than the window comes back
      const oldest = await audit.list({ userId: u, until: Date.now() - 86_400_000 });
      expect(oldest).to.deep.equal({ events: [], next: null });
    } finally {
      await stopServices(small);
    }
  });

  describe('recorded where it happens', function () {
    let n = 0;
    const job = (sender: Partial<InboundMessage>, text: string): Job<InboundJob> =>
      ({
        id: `j${++n}`,
        attemptsMade: 0,
        data: {
          message: { provider: 'evolution', channel: 'evolution:main', id: randomPin().slice(4), phone: null, text, displayName: 'Ada Audit', ...sender },
          nonce: randomPin(),
          receivedAt: Date.now(),
        },
      }) as Job<InboundJob>;
    const worker = (confirm: boolean, s: Services = services) =>
      inboundProcessor({ ...s, config: { ...s.config, loginConfirmation: confirm } }, Notifier.classic(s.redis, s.keys.socketChannel()));
    const code = async (): Promise<{ text: string; pinId: string }> => {
      const emoji = randomEmoji();
      const reg = await services.registrations.register(randomPin(), emoji, caller);
      return { text: `PIN: ${emoji}`, pinId: String((reg as { pinId: string }).pinId) };
    };
    const types = (events: AuditRecord[]): AuditType[] => events.map((e) => e.type).reverse();

    it('a chat sign-in: login.succeeded with the channel, the registering network and device; the new phone linked; a blocked account denied', async function () {
      const phone = randomPhone();
      const c = await code();
      expect(await worker(false)(job({ phone }, c.text))).to.equal('logged-in');
      const userId = await services.redis.get(services.keys.userByPhone(phone));
      const events = await services.audit.forUser(userId!, 10);
      expect(types(events)).to.deep.equal(['login.succeeded', 'identity.linked']);
      expect(events[1]).to.deep.include({ userId, client: 'evolution:main', ipGroup: '203.0.113.x', actor: 'system' });
      expect(events[1]!.detail).to.deep.equal({ pinId: c.pinId, device: originOf(CHROME, '').device, confirmed: false });
      expect(events[0]!.detail).to.deep.equal({ kind: 'phone' });
      // blocked, the next code of the same phone is refused: login.denied, reason blocked
      await services.scripts.run('user-block', [services.keys.user(userId!)], ['block', Date.now(), 'admin:someone', '']);
      const again = await code();
      expect(await worker(false)(job({ phone }, again.text))).to.equal('blocked');
      const [denied] = await services.audit.forUser(userId!, 1);
      expect(denied).to.deep.include({ type: 'login.denied', userId, ipGroup: '203.0.113.x', client: 'evolution:main' });
      expect(denied!.detail).to.include({ pinId: again.pinId, reason: 'blocked' });
    });

    it('confirmation: asked, answered YES and signed in; asked, answered NO and denied; STOP ends the sessions', async function () {
      const phone = randomPhone();
      const w = worker(true);
      const first = await code();
      expect(await w(job({ phone }, first.text))).to.equal('confirmation-asked');
      expect(await w(job({ phone }, 'YES'))).to.equal('logged-in');
      const userId = (await services.redis.get(services.keys.userByPhone(phone)))!;
      const second = await code();
      expect(await w(job({ phone }, second.text))).to.equal('confirmation-asked');
      expect(await w(job({ phone }, 'NO'))).to.equal('denied');
      expect(await w(job({ phone }, 'STOP'))).to.equal('signed-out');
      const events = await services.audit.forUser(userId, 20);
      expect(types(events)).to.deep.equal([
        // the first question was asked before the account existed: it names nobody
        'confirmation.answered',
        'login.succeeded',
        'identity.linked',
        'confirmation.asked',
        'confirmation.answered',
        'login.denied',
        'session.ended',
        'chat.stop',
      ]);
      const byType = new Map(events.map((e) => [e.type, e]));
      expect(byType.get('confirmation.asked')!.detail).to.include({ pinId: second.pinId });
      expect(byType.get('login.denied')).to.deep.include({ ipGroup: '203.0.113.x', client: 'evolution:main' });
      expect(byType.get('login.denied')!.detail).to.include({ pinId: second.pinId, reason: 'declined' });
      expect(byType.get('login.succeeded')!.detail).to.include({ pinId: first.pinId, confirmed: true });
      expect(byType.get('session.ended')!.detail).to.deep.equal({ how: 'stop', kind: 'all', sessions: 1 });
      expect(byType.get('chat.stop')!.detail).to.deep.equal({ sessions: 1 });
      // the question asked of the then unknown sender is in the trail, naming no one
      const asked = (await services.audit.list({ types: ['confirmation.asked'], limit: 200 })).events.filter((e) => e.detail.pinId === first.pinId);
      expect(asked).to.have.length(1);
      expect(asked[0]!.userId).to.equal(null);
    });

    it('an expiry: login.expired with the registering network', async function () {
      const c = await code();
      // the registration of the code (a test may SCAN its own prefix)
      const regs = await services.redis.keys(`${services.keys.prefix}:reg:*`);
      const ids = await Promise.all(regs.map((k) => services.redis.hget(k, 'pinId')));
      const key = regs[ids.indexOf(c.pinId)]!;
      const pinHash = /\{r(.+)\}/.exec(key)![1]!;
      const past = Date.now() - 5000;
      await services.redis.hset(services.keys.registration(pinHash), 'expiresAt', past);
      await services.redis.zadd(services.keys.active(services.keys.activeBucket(pinHash)), past, pinHash);
      await expiryProcessor(
        services,
        Notifier.classic(services.redis, services.keys.socketChannel()),
      )({ data: { second: Math.floor(Date.now() / 1000) - 2 } } as Job);
      const expired = (await services.audit.list({ types: ['login.expired'], limit: 200 })).events.filter((e) => e.detail.pinId === c.pinId);
      expect(expired).to.have.length(1);
      expect(expired[0]).to.deep.include({ userId: null, ipGroup: '203.0.113.x' });
    });

    it('a failing record never fails the action: the login goes on, a warning and a count', async function () {
      // a client that refuses every command at once: Redis unreachable for the trail alone
      const dead = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
      dead.on('error', () => undefined);
      const broken = new AuditTrail(dead, new Scripts(dead), services.keys, services.config.audit);
      const metrics = createProcessMetrics({ web: false, worker: true });
      broken.attach(metrics.audit);
      try {
        const phone = randomPhone();
        const c = await code();
        expect(await worker(false, { ...services, audit: broken })(job({ phone }, c.text))).to.equal('logged-in');
        expect(await services.redis.get(services.keys.userByPhone(phone))).to.be.a('string');
        expect(broken.failures).to.equal(2);
        const text = await metrics.registry.metrics();
        expect(text).to.contain('pinauth_audit_failures_total{type="login.succeeded"} 1');
        expect(text).to.contain('pinauth_audit_failures_total{type="identity.linked"} 1');
      } finally {
        dead.disconnect();
      }
    });

    it('counts recorded events by type in /metrics', async function () {
      const metrics = createProcessMetrics({ web: true, worker: false });
      const trail = new AuditTrail(services.redis, services.scripts, services.keys, services.config.audit);
      trail.attach(metrics.audit);
      await trail.note({ type: 'key.created' });
      await trail.note({ type: 'key.created' });
      await trail.note({ type: 'login.failed' });
      const text = await metrics.registry.metrics();
      expect(text).to.contain('pinauth_audit_events_total{type="key.created"} 2');
      expect(text).to.contain('pinauth_audit_events_total{type="login.failed"} 1');
    });
  });
});

/** The web side: sessions ended and refresh reuse with the request's id and IP group, and the live stream. */
describe('accounts: the audit trail over HTTP (sessions, the live stream)', function () {
  let services: Services;
  let server: http.Server;
  let base: string;
  before(async function () {
    services = await startServices('audit-http', {
      JWT_SECRET: TEST_JWT_SECRET,
      AUDIT_STREAMS_PER_NODE: '2',
      AUDIT_STREAM_HEARTBEAT_SECONDS: '1',
      REFRESH_REUSE_SECONDS: '0',
    });
    server = http.createServer(createApp(services).callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async function () {
    services.audit.stopFollowing();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await stopServices(services);
  });

  const signIn = async (admin = false): Promise<{ userId: string; token: string; refreshToken: string }> => {
    const logins = new LoginProcessor(services.scripts, services.keys, services.tokens, services.sessions, { graceSeconds: 60, confirm: false });
    const emoji = randomEmoji();
    await services.registrations.register(randomPin(), emoji, caller);
    const out = await logins.process({
      message: { provider: 'evolution', id: randomPin().slice(4), phone: randomPhone(), text: `PIN: ${emoji}`, displayName: 'Sam Stream' },
      nonce: randomPin(),
      receivedAt: Date.now(),
    });
    if (out.outcome !== 'logged-in') throw new Error(out.outcome);
    const userId = out.result.user.id;
    if (admin) await services.redis.hset(services.keys.user(userId), 'roles', JSON.stringify(['user', 'admin']));
    return { userId, token: out.result.token, refreshToken: out.result.refreshToken };
  };
  const ofType = async (userId: string, type: AuditType): Promise<AuditRecord[]> => (await services.audit.list({ userId, types: [type] })).events;

  it('a logout, a sign-out everywhere and a reused refresh token: recorded with the request id and the IP group', async function () {
    const a = await signIn();
    const out = await request(base, 'POST', '/logout', { json: { userId: a.userId }, token: a.token, headers: { 'x-request-id': 'req-logout-1' } });
    expect(out.status, out.text).to.equal(200);
    const [logout] = await ofType(a.userId, 'session.ended');
    expect(logout).to.deep.include({ requestId: 'req-logout-1', ipGroup: '127.0.0.1', userId: a.userId });
    expect(logout!.detail).to.include({ how: 'logout', kind: 'app', sessions: 1 });

    const b = await signIn();
    const fresh = await request<{ token: string }>(base, 'POST', '/refresh-token', { json: { refreshToken: b.refreshToken }, token: b.token });
    expect(fresh.status, fresh.text).to.equal(200);
    const reused = await request(base, 'POST', '/refresh-token', {
      json: { refreshToken: b.refreshToken },
      token: b.token,
      headers: { 'x-request-id': 'req-reuse-1' },
    });
    expect(reused.status).to.equal(401);
    const [reuse] = await ofType(b.userId, 'refresh.reuse');
    expect(reuse).to.deep.include({ requestId: 'req-reuse-1', ipGroup: '127.0.0.1' });
    expect((await ofType(b.userId, 'session.ended'))[0]!.detail).to.include({ how: 'reuse', kind: 'app', sessions: 1 });

    const c = await signIn();
    expect((await request(base, 'DELETE', '/sessions', { token: c.token })).status).to.equal(200);
    expect((await ofType(c.userId, 'session.ended'))[0]!.detail).to.include({ how: 'everywhere', kind: 'all', sessions: 1 });
    // a session that is not there ends nothing and records nothing
    expect((await request(base, 'DELETE', '/sessions/nope', { token: (await signIn()).token })).status).to.equal(404);
  });

  describe('GET /admin/api/v1/events/stream', function () {
    const path = '/admin/api/v1/events/stream';
    let admin: { userId: string; token: string };
    before(async function () {
      admin = await signIn(true);
    });
    const open = (query = '', opts: { token?: string; headers?: Record<string, string> } = {}): Promise<SseClient> =>
      openSse(`${base}${path}${query}`, { token: admin.token, ...opts });

    it('streams each event as it is recorded: its stream id, `event: audit`, the record as JSON', async function () {
      const s = await open();
      try {
        expect(s.status).to.equal(200);
        expect(s.headers.get('content-type')).to.match(/^text\/event-stream/);
        expect(s.headers.get('cache-control')).to.equal('no-store');
        expect(await s.next()).to.deep.equal({ retry: '5000', comment: 'connected' });
        const u = `live${Date.now()}`;
        const id = await services.audit.record({
          type: 'account.blocked',
          userId: u,
          actor: { kind: 'admin', userId: admin.userId },
          detail: { reason: 'spam' },
        });
        const frame = (await s.nextEvent())!;
        expect(frame.id).to.equal(id);
        expect(frame.event).to.equal('audit');
        const [stored] = await services.audit.forUser(u, 1);
        expect(JSON.parse(frame.data!)).to.deep.equal(stored);
      } finally {
        s.close();
      }
    });

    it('resumes after Last-Event-ID or ?after=, and filters by person and type', async function () {
      const u = `res${Date.now()}`;
      const first = await services.audit.record({ type: 'login.succeeded', userId: u });
      const second = await services.audit.record({ type: 'login.denied', userId: u });
      await services.audit.record({ type: 'login.denied', userId: `${u}-other` });
      const third = await services.audit.record({ type: 'chat.stop', userId: u });
      const byHeader = await open(`?userId=${u}`, { headers: { 'last-event-id': first } });
      try {
        expect((await byHeader.nextEvent())!.id).to.equal(second);
        expect((await byHeader.nextEvent())!.id).to.equal(third);
      } finally {
        byHeader.close();
      }
      const byQuery = await open(`?after=${first}&userId=${u}&type=chat.stop,account.erased`);
      try {
        expect((await byQuery.nextEvent())!.id).to.equal(third);
      } finally {
        byQuery.close();
      }
    });

    it('writes a heartbeat comment when quiet; ends once the caller loses the admin role', async function () {
      const other = await signIn(true);
      const s = await open('', { token: other.token });
      try {
        expect((await s.next())!.comment).to.equal('connected');
        expect(await s.next(5000)).to.deep.equal({ comment: 'heartbeat' });
        await services.redis.hset(services.keys.user(other.userId), 'roles', JSON.stringify(['user']));
        // the next heartbeat checks the door again: the stream ends
        let f: SseFrame | null;
        do f = await s.next(5000);
        while (f !== null);
      } finally {
        s.close();
      }
    });

    it('an API key: one without events:read is 403; one with it streams until it is revoked', async function () {
      const by = { kind: 'admin' as const, userId: admin.userId };
      const usersOnly = await services.apiKeys.create({ name: 'no events', scopes: ['users:read'] }, by);
      const refused = await openSse(`${base}${path}`, { token: usersOnly.secret });
      expect(refused.status).to.equal(403);
      const siem = await services.apiKeys.create({ name: 'SIEM', scopes: ['events:read'] }, by);
      const s = await openSse(`${base}${path}`, { token: siem.secret });
      try {
        expect(s.status).to.equal(200);
        expect((await s.next())!.comment).to.equal('connected');
        const id = await services.audit.record({ type: 'login.expired' });
        expect((await s.nextEvent())!.id).to.equal(id);
        await services.apiKeys.revoke(siem.key.id);
        let f: SseFrame | null;
        do f = await s.next(5000);
        while (f !== null);
        expect((await openSse(`${base}${path}`, { token: siem.secret })).status).to.equal(401);
      } finally {
        s.close();
      }
    });

    it('at most AUDIT_STREAMS_PER_NODE at once (429 past it); a client gone frees its place; a shutdown ends them', async function () {
      const a = await open();
      const b = await open();
      const c = await open();
      try {
        expect([a.status, b.status]).to.deep.equal([200, 200]);
        expect(c.status).to.equal(429);
        expect(JSON.parse(c.text!)).to.include({ success: false, error: 'RATE_LIMITED' });
        expect(c.headers.get('retry-after')).to.equal('5');
        a.close();
        await eventually(async () => (services.audit.following() === 1 ? true : undefined), 5000, 10);
        const d = await open();
        expect(d.status).to.equal(200);
        expect((await d.next())!.comment).to.equal('connected');
        expect((await b.next())!.comment).to.equal('connected');
        services.audit.stopFollowing();
        // both streams end, cleanly: the server ended them
        for (const s of [b, d]) {
          let f: SseFrame | null;
          do f = await s.next(5000);
          while (f !== null);
        }
        expect(services.audit.following()).to.equal(0);
      } finally {
        for (const s of [a, b, c]) s.close();
      }
    });

    it('refuses bad input and callers without the scope', async function () {
      const person = await signIn();
      const cases: [string, Record<string, string>, string | undefined, number][] = [
        ['', {}, undefined, 401],
        ['', {}, person.token, 403],
        ['?type=nonsense', {}, admin.token, 400],
        ['?after=12', {}, admin.token, 400],
        ['', { 'last-event-id': 'x'.repeat(5000) }, admin.token, 400],
        ['?userId=%7Bu1%7D', {}, admin.token, 400],
        ['?userId=a&userId=b', {}, admin.token, 400],
      ];
      for (const [query, headers, token, status] of cases) {
        const r = await openSse(`${base}${path}${query}`, { token, headers });
        expect(r.status, `${query} ${JSON.stringify(headers).slice(0, 40)}`).to.equal(status);
        expect(JSON.parse(r.text!)).to.have.property('success', false);
      }
      expect(services.audit.following()).to.equal(0);
    });
  });
});

/** The one real-process test: a worker's events reach a web node's live stream and /metrics; the web node's shutdown ends its streams. */
describe('accounts: the audit trail on a running service', function () {
  this.timeout(60000);
  let stack: Stack;
  before(async function () {
    stack = await startStack({ name: 'audit-live', webs: 1, workers: 1, env: { ...ADMIN, METRICS_INTERVAL_MS: '200' } });
  });
  after(async () => stack?.stop());

  it("a chat sign-in in the worker: on the web node's live stream and counted in /metrics; a shutdown ends the stream and the node exits", async function () {
    const admin = await adminLogin(stack.url, stack.prefix);
    const live = await openSse(`${stack.url}/admin/api/v1/events/stream?type=login.succeeded`, { token: admin.token });
    try {
      expect(live.status).to.equal(200);
      expect((await live.next())!.comment).to.equal('connected');
      const { login } = await fullLogin(stack.url);
      const frame = (await live.nextEvent(20000))!;
      const record = JSON.parse(frame.data!) as AuditRecord;
      expect(record).to.deep.include({ type: 'login.succeeded', userId: login.user.id, actor: 'system' });
      expect(record.client).to.match(/^evolution:/);
      await eventually(async () => {
        const m = await request(stack.url, 'GET', '/metrics', { token: ADMIN.METRICS_TOKEN });
        return /pinauth_audit_events_total\{[^}]*type="login\.succeeded"[^}]*\} [1-9]/.test(m.text) ? true : undefined;
      }, 10000);
      // the node ends its streams first: it does not wait out SHUTDOWN_TIMEOUT_MS (25 s) for them
      const web = stack.webs[0]!;
      const stopped = Date.now();
      const exited = stopProcess(web);
      let f: SseFrame | null;
      do f = await live.next(10000);
      while (f !== null);
      expect(await exited).to.equal(0);
      expect(Date.now() - stopped, 'ms from SIGTERM to exit').to.be.below(10000);
    } finally {
      live.close();
    }
  });
});

/** The trail on a 3-primary cluster: the stream on its own slot, each person's index on theirs; every step one slot. */
describe('accounts: the audit trail on a 3-primary Redis cluster', function () {
  this.timeout(60000);
  let topo: ClusterTopology | undefined;
  let s: Services | undefined;
  before(async function () {
    topo = await ClusterTopology.start({ primaries: 3 });
    s = await startServices('audit-cl', { ...topo.env(), JWT_SECRET: TEST_JWT_SECRET });
  });
  after(async function () {
    await s?.close();
    await topo?.stop();
  });

  it('records, reads a person, follows live and forgets, with no cross-slot command', async function () {
    const audit = s!.audit;
    const [p, q] = ['clusterPersonP000000000', 'clusterPersonQ000000000'];
    const follower = audit.follow(undefined, { userId: q });
    const live = follower.records();
    const first = live.next();
    await audit.record({ type: 'login.succeeded', userId: p });
    await audit.record({ type: 'account.blocked', userId: q, actor: { kind: 'admin', userId: p } });
    await audit.record({ type: 'chat.stop', userId: p });
    const seen = await first;
    expect(seen.value).to.deep.include({ type: 'account.blocked', userId: q, actor: `admin:${p}` });
    follower.close();
    expect((await live.next()).done).to.equal(true);
    expect((await audit.forUser(p, 10)).map((e) => e.type)).to.deep.equal(['chat.stop', 'account.blocked', 'login.succeeded']);
    expect(await audit.forget(p)).to.equal(3);
    expect(await audit.forUser(p, 10)).to.deep.equal([]);
    const theirs = await audit.forUser(q, 10);
    expect(theirs.map((e) => [e.type, e.actor])).to.deep.equal([['account.blocked', 'erased']]);
  });
});
