import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { SYSTEM } from '../../src/accounts/actor.js';
import { type ErasureReceipt, Eraser } from '../../src/accounts/erase.js';
import type { PersonExport } from '../../src/accounts/export.js';
import { coreHoldings, type Holding } from '../../src/accounts/holdings.js';
import { IdempotencyKeys } from '../../src/http/idempotency.js';
import { createApp } from '../../src/http/app.js';
import { connect, waitReady } from '../../src/redis/connection.js';
import { personJobs } from '../../src/queues/person-jobs.js';
import { startWorkers, type WorkerHost } from '../../src/queues/worker-host.js';
import type { Services } from '../../src/services.js';
import { TEST_JWT_SECRET } from '../core/support.js';
import { adminLogin } from '../helpers/admin.js';
import { fullLogin, randomEmoji, randomPhone, randomPin, sendChat, type LoginBody } from '../helpers/flow.js';
import { eventually, get, post, request } from '../helpers/http.js';
import { ClusterTopology } from '../helpers/redis-topology.js';
import { startServices, stopServices } from '../helpers/services.js';
import { chatLogin, digits, leftovers, newBsuid, newLid, openIdLogin, queuesIdle } from './support.js';

interface Receipted {
  success: boolean;
  receipt: ErasureReceipt;
}
interface Exported {
  success: boolean;
  export: PersonExport;
}

/** A sign-in by a chat message from a sender with a LID and the phone beside it (Evolution's `remoteJidAlt`), collected as an app does. */
async function lidLogin(base: string, phone: string, lid: string): Promise<LoginBody> {
  const pin = randomPin();
  const emoji = randomEmoji();
  expect((await post(base, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
  const hook = await sendChat(base, `PIN: ${emoji}`, { remoteJid: `${lid}@lid`, remoteJidAlt: `${digits(phone)}@s.whatsapp.net`, pushName: 'Erin Erase' });
  expect(hook.status, hook.text).to.equal(200);
  return eventually(async () => {
    const r = await post<LoginBody>(base, '/check-login', { pin });
    if (r.status !== 200) throw new Error(`check-login ${r.status}: ${r.text}`);
    return r.body.verified ? r.body : undefined;
  });
}

/**
 * Erase and export (docs/accounts.md) with the web and the workers in this process on the
 * shared Redis: a person known by phone, LID and BSUID, with two app sessions, an OpenID login,
 * a result waiting to be collected, a kept sender, a message sent with an Idempotency-Key, their
 * jobs finished in the queues. After the erase a walk of every key under the test's prefix,
 * names and values, finds none of their identifiers; the next message from the phone makes a
 * new account.
 */
describe('accounts: erase and export (one Redis)', function () {
  this.timeout(60000);
  let services: Services;
  let workers: WorkerHost;
  let server: http.Server;
  let base: string;

  before(async function () {
    services = await startServices('erase', { JWT_SECRET: TEST_JWT_SECRET, IDEMPOTENCY_KEY_SECONDS: '3600' });
    workers = startWorkers(services);
    server = http.createServer(createApp(services).callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async function () {
    await new Promise((resolve) => server?.close(resolve));
    await workers?.close(5000);
    await stopServices(services);
  });

  /** A person with something in every holding; their access token and identifiers. */
  async function busyPerson() {
    const phone = randomPhone();
    const lid = newLid();
    const bsuid = newBsuid();
    const first = await lidLogin(base, phone, lid);
    const userId = first.user.id;
    // the same person from the Cloud API (BSUID beside phone and LID): a second session, its result left uncollected
    const second = await chatLogin(services, { phone, lid, userId: bsuid, provider: 'cloud' });
    expect(second.outcome).to.equal('logged-in');
    if (second.outcome === 'logged-in') expect(second.result.user.id).to.equal(userId);
    // a mistyped code: its sender kept for an edit
    expect((await sendChat(base, 'PIN: 🦄🦄🦄', { phone, pushName: 'Erin Erase' })).status).to.equal(200);
    // a message sent by the app with an Idempotency-Key (its job, delivery record, key and budget)
    const sent = await request(base, 'POST', '/send-message', {
      token: first.token,
      json: { phoneNumber: randomPhone(), message: 'hello from Erin' },
      headers: { 'idempotency-key': 'erase-key-1' },
    });
    expect(sent.status, sent.text).to.equal(200);
    const grantId = await openIdLogin(services, userId);
    await queuesIdle(services);
    return { phone, lid, bsuid, userId, token: first.token, grantId };
  }

  it('export lists everything held: the record, every identifier, every session (app and OpenID), the result waiting, jobs, events', async function () {
    const p = await busyPerson();
    const res = await get<Exported>(base, '/account/export', p.token);
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const doc = res.body.export;
    expect(doc.userId).to.equal(p.userId);
    const h = doc.holdings as Record<string, unknown[]> & { account: { id: string; phone: string; roles: string[] } };
    expect(h.account.id).to.equal(p.userId);
    expect(h.account.phone).to.equal(p.phone);
    expect(h.account.roles).to.deep.equal(['user']);
    const ids = (h.identifiers as { kind: string; value: string; linked: boolean }[]).map((i) => `${i.kind}:${i.value}:${i.linked}`);
    expect(ids).to.have.members([`phone:${p.phone}:true`, `lid:${p.lid}:true`, `bsuid:${p.bsuid}:true`]);
    // both app sessions and the OpenID login
    expect(h.sessions).to.have.length(2);
    expect((h.sessions as { kind: string }[]).every((s) => s.kind === 'app')).to.equal(true);
    expect((h.openid as { id: string; client: { id: string } }[]).map((o) => [o.id, o.client.id])).to.deep.equal([[`oidc.${p.grantId}`, 'erase-app']]);
    expect((h.registrations as { state: string }[]).map((r) => r.state)).to.include('verified');
    expect((h.senders as { phone: string; displayName: string }[]).map((s) => [s.phone, s.displayName])).to.deep.equal([[p.phone, 'Erin Erase']]);
    expect(h.deliveries).to.have.length(1);
    expect((h.jobs as { queue: string }[]).length).to.be.greaterThan(1);
    // one a minute: the walk of the keyspace is not for a loop
    const again = await get(base, '/account/export', p.token);
    expect(again.status).to.equal(429);
    expect(again.body.error).to.equal('RATE_LIMITED');
    expect(Number(again.headers.get('retry-after'))).to.be.within(1, 60);
    // never a secret: no token, refresh jti, PIN hash or result in the document
    const text = JSON.stringify(doc);
    expect(text).to.not.include(p.token);
    expect(text).to.not.include('refreshToken');
  });

  it('after an erase no key under the prefix names the user id, phone, LID or BSUID; the token is dead; the next message makes a new account', async function () {
    const p = await busyPerson();
    const needles = [p.userId, digits(p.phone), p.lid, p.bsuid];
    // the walk can fail: before the erase it finds them in many families
    const before = await leftovers(services.redis, services.keys.prefix, needles);
    expect(before.length, before.join('\n')).to.be.greaterThan(10);
    const res = await request<Receipted>(base, 'DELETE', '/account', { token: p.token });
    expect(res.status, res.text).to.equal(200);
    const { receipt } = res.body;
    expect(receipt.id).to.match(/^er_[A-Za-z0-9_-]{22}$/);
    expect(receipt.actor).to.equal('user');
    expect(receipt.removed.sessions).to.equal(2);
    expect(receipt.removed.identifiers).to.equal(3);
    expect(receipt.removed.openid).to.be.greaterThan(0);
    expect(receipt.removed.jobs).to.be.greaterThan(0);
    expect(receipt.removed.account).to.be.greaterThan(0);
    // the directory had indexed them (the inbound worker, after the login)
    expect(receipt.removed.directory).to.equal(1);
    await queuesIdle(services);
    const after = await leftovers(services.redis, services.keys.prefix, needles);
    expect(after, after.join('\n')).to.deep.equal([]);
    // the receipt is kept, without personal data; the trail names the receipt, not the person
    expect(JSON.parse((await services.redis.get(services.keys.erasure(receipt.id)))!)).to.deep.equal(receipt);
    expect(await services.redis.ttl(services.keys.erasure(receipt.id))).to.be.within(364 * 86400, 365 * 86400);
    const erased = (await services.audit.list({ types: ['account.erased'] })).events.find((e) => e.detail.receipt === receipt.id);
    expect(erased?.userId).to.equal(null);
    expect(erased?.detail.by).to.equal('user');
    // the token's session is gone with the account
    expect((await get(base, '/profile', p.token)).status).to.equal(401);
    expect((await request(base, 'DELETE', '/account', { token: p.token })).status).to.equal(401);
    // the same phone and LID: a fresh account
    const again = await lidLogin(base, p.phone, p.lid);
    expect(again.user.id).to.not.equal(p.userId);
    expect(again.user.phone).to.equal(p.phone);
    expect(again.user.roles).to.deep.equal(['user']);
  });

  it('a fault in the middle (a holding throws once) leaves no way in, and a retry finishes the same erase', async function () {
    const p = await busyPerson();
    let thrown = false;
    const flaky = services.holdings.map(
      (h): Holding =>
        h.name !== 'senders'
          ? h
          : {
              ...h,
              erase: async (s) => {
                if (!thrown) {
                  thrown = true;
                  throw new Error('fault injected');
                }
                return h.erase(s);
              },
            },
    );
    const eraser = new Eraser(services.redis, services.keys, flaky, services.audit);
    await eraser.erase(p.userId, SYSTEM).then(
      () => expect.fail('the fault did not stop the erase'),
      (err: Error) => expect(err.message).to.equal('fault injected'),
    );
    // what went before the fault is done: no session, no link; the plan says so
    expect((await get(base, '/profile', p.token)).status).to.equal(401);
    expect(await services.redis.get(services.keys.identity('phone', p.phone))).to.equal(null);
    const plan = await services.redis.hgetall(services.keys.erasePlan(p.userId));
    expect(plan).to.include.keys('receipt', 'person', 'done:sessions', 'done:identifiers');
    expect(plan).to.not.have.key('done:senders');
    // a retry (any node, the API's eraser) resumes it: same receipt, nothing left
    const receipt = await services.eraser.erase(p.userId, SYSTEM);
    expect(receipt.id).to.equal(plan.receipt);
    expect(receipt.removed.sessions).to.equal(2);
    expect(receipt.removed.senders).to.equal(1);
    const after = await leftovers(services.redis, services.keys.prefix, [p.userId, digits(p.phone), p.lid, p.bsuid]);
    expect(after, after.join('\n')).to.deep.equal([]);
    // done means done: the user is gone
    await services.eraser.erase(p.userId, SYSTEM).then(
      () => expect.fail('a second erase found the user'),
      (err: { code?: string }) => expect(err.code).to.equal('NOT_FOUND'),
    );
  });

  it('a connection lost in the middle leaves a pending erase that resume() finishes', async function () {
    const p = await busyPerson();
    const conn = connect(services.config.redis, 'command', 'erase-fault');
    await waitReady(conn, 5000);
    let reached = false;
    try {
      const holdings = coreHoldings({
        redis: conn,
        keys: services.keys,
        scripts: services.scripts,
        listSessions: (id) => services.sessions.list(id, ''),
        oidc: services.oidcLogins,
        jobs: personJobs(conn, services.queues.inbound, services.queues.outbound),
        audit: services.audit,
      }).map((h): Holding => {
        if (h.name !== 'deliveries') return h;
        const erase = async (s: Parameters<Holding['erase']>[0]): Promise<number> => {
          reached = true;
          return h.erase(s).finally(() => conn.disconnect());
        };
        return { ...h, erase };
      });
      const eraser = new Eraser(conn, services.keys, holdings, services.audit);
      await eraser.erase(p.userId, SYSTEM).then(
        () => expect.fail('the lost connection did not stop the erase'),
        (err: Error) => expect(err.message).to.match(/Connection is closed|writeable/i),
      );
      expect(reached, 'the erase reached the holding that loses the connection').to.equal(true);
    } finally {
      conn.disconnect();
    }
    expect(await services.redis.zscore(services.keys.erasePending(), p.userId)).to.not.equal(null);
    const done = await services.eraser.resume(SYSTEM);
    expect(done.length).to.be.greaterThan(0);
    expect(await services.redis.zscore(services.keys.erasePending(), p.userId)).to.equal(null);
    const after = await leftovers(services.redis, services.keys.prefix, [p.userId, digits(p.phone), p.lid, p.bsuid]);
    expect(after, after.join('\n')).to.deep.equal([]);
  });

  describe('the admin routes, tried as an attacker would', function () {
    let admin: LoginBody;
    before(async function () {
      admin = await adminLogin(base, services.keys.prefix);
    });

    it('no token 401, a non-admin 403, a bad id 400, an unknown one 404; the person routes never reach another account', async function () {
      const { login: other } = await fullLogin(base);
      const victim = (await fullLogin(base)).login;
      for (const [method, path] of [
        ['GET', `/admin/api/v1/users/${victim.user.id}/export`],
        ['DELETE', `/admin/api/v1/users/${victim.user.id}`],
      ] as const) {
        expect((await request(base, method, path)).status, `${method} ${path} without a token`).to.equal(401);
        const forbidden = await request(base, method, path, { token: other.token });
        expect(forbidden.status).to.equal(403);
        expect(forbidden.body.error).to.equal('FORBIDDEN');
      }
      for (const bad of ['a%20b', 'x'.repeat(65), 'short', 'abcdefgh.b', 'abcdefgh*', '%F0%9F%A6%84']) {
        const r = await request(base, 'DELETE', `/admin/api/v1/users/${bad}`, { token: admin.token });
        expect(r.status, bad).to.equal(400);
        expect(r.body.error).to.equal('VALIDATION_ERROR');
      }
      const unknown = await request(base, 'DELETE', '/admin/api/v1/users/gXH0aZyOJJFU5t-wQwvazg', { token: admin.token });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error).to.equal('NOT_FOUND');
      expect((await get(base, '/admin/api/v1/users/gXH0aZyOJJFU5t-wQwvazg/export', admin.token)).status).to.equal(404);
      // the person's routes take no id: a query or body naming another user changes nothing
      const own = await request<Exported>(base, 'GET', `/account/export?userId=${victim.user.id}`, { token: other.token });
      expect(own.body.export.userId).to.equal(other.user.id);
      expect((await request(base, 'DELETE', '/account', { token: 'not-a-token' })).status).to.equal(401);
      expect((await get(base, '/profile', victim.token)).status).to.equal(200);
    });

    it("an admin exports and erases a person; the receipt names the admin; the person's token is refused; a second erase is 404", async function () {
      const { login: person } = await fullLogin(base, { pushName: 'Pat Person' });
      const exported = await get<Exported>(base, `/admin/api/v1/users/${person.user.id}/export`, admin.token);
      expect(exported.status, exported.text).to.equal(200);
      expect(exported.body.export.userId).to.equal(person.user.id);
      expect((exported.body.export.holdings.sessions as unknown[]).length).to.equal(1);
      const ev = (await services.audit.list({ userId: person.user.id, types: ['account.exported'] })).events[0];
      expect(ev?.actor).to.equal(`admin:${admin.user.id}`);
      const res = await request<Receipted>(base, 'DELETE', `/admin/api/v1/users/${person.user.id}`, { token: admin.token });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.receipt.actor).to.equal(`admin:${admin.user.id}`);
      expect((await get(base, '/profile', person.token)).status).to.equal(401);
      const again = await request(base, 'DELETE', `/admin/api/v1/users/${person.user.id}`, { token: admin.token });
      expect(again.status).to.equal(404);
      const after = await leftovers(services.redis, services.keys.prefix, [person.user.id, digits(person.user.phone)]);
      expect(after, after.join('\n')).to.deep.equal([]);
      // the admin's own account is untouched
      expect((await get(base, '/profile', admin.token)).status).to.equal(200);
    });

    it('an admin who made an API key and blocked someone is erased: the key and the block stay, their maker is `erased`', async function () {
      const other = await adminLogin(base, services.keys.prefix);
      const made = await post<{ key: { id: string }; secret: string }>(base, '/admin/api/v1/keys', { name: 'siem', scopes: ['events:read'] }, other.token);
      expect(made.status, made.text).to.equal(200);
      // someone they blocked (the record's blockedBy names them)
      const { login: blocked } = await fullLogin(base);
      await services.redis.hset(services.keys.user(blocked.user.id), 'blockedBy', `admin:${other.user.id}`);
      const res = await request<Receipted>(base, 'DELETE', `/admin/api/v1/users/${other.user.id}`, { token: admin.token });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.receipt.removed.keys).to.equal(1);
      expect(res.body.receipt.removed.blocks).to.equal(1);
      expect(await services.redis.hget(services.keys.user(blocked.user.id), 'blockedBy')).to.equal('erased');
      expect(await services.redis.hget(services.keys.apiKey(made.body.key.id), 'createdBy')).to.equal('erased');
      expect((await get(base, '/admin/api/v1/events?limit=1', made.body.secret)).status).to.equal(200);
      const after = await leftovers(services.redis, services.keys.prefix, [other.user.id, digits(other.user.phone)]);
      expect(after, after.join('\n')).to.deep.equal([]);
    });
  });
});

/**
 * The erase on a 3-primary Redis Cluster: the person's keys spread over every primary (their
 * user tag, each identifier's, each message's, the queues'), each erased by one-slot commands.
 */
describe('accounts: erase on a 3-primary Redis Cluster', function () {
  this.timeout(120000);
  let topo: ClusterTopology | undefined;
  let services: Services | undefined;

  before(async function () {
    topo = await ClusterTopology.start({ primaries: 3 });
    services = await startServices('erase-cl', { ...topo.env(), JWT_SECRET: TEST_JWT_SECRET });
  });
  after(async function () {
    await stopServices(services);
    await topo?.stop();
  });

  it('every key about the person goes, on every primary; the next message from the phone makes a new account', async function () {
    const s = services!;
    const phone = randomPhone();
    const lid = newLid();
    const bsuid = newBsuid();
    const first = await chatLogin(s, { phone, lid, userId: bsuid, provider: 'cloud' });
    if (first.outcome !== 'logged-in') expect.fail(`no login: ${first.outcome}`);
    const userId = first.result.user.id;
    expect((await chatLogin(s, { phone })).outcome).to.equal('logged-in');
    // an Idempotency-Key, a queued message with its delivery record, a kept sender, an OpenID login
    const run = await new IdempotencyKeys(s.redis, s.keys, 3600).begin(userId, 'cl-key', { m: 1 });
    await s.queues.outboundFor(run.workId).add('send', { to: phone, text: 'hi', kind: 'manual', userId }, { jobId: run.workId });
    await s.delivery.queued(run.workId, { owner: userId, kind: 'manual', channel: 'log' });
    await s.redis.set(s.keys.sender('cl-msg'), JSON.stringify({ phone, lid }), 'EX', 600);
    await openIdLogin(s, userId);
    const needles = [userId, digits(phone), lid, bsuid];
    const before = await leftovers(s.redis, s.keys.prefix, needles);
    const nodes = new Set<string>();
    for (const node of (s.redis as import('ioredis').Cluster).nodes('master')) {
      const [, names] = await node.scan('0', 'MATCH', `${s.keys.prefix}:*`, 'COUNT', 10000);
      if (names.length > 0) nodes.add(`${node.options.port}`);
    }
    expect(nodes.size, 'keys on every primary').to.equal(3);
    expect(before.length).to.be.greaterThan(10);
    const receipt = await s.eraser.erase(userId, { kind: 'key', keyId: 'k_test' });
    expect(receipt.actor).to.equal('key:k_test');
    expect(receipt.removed.identifiers).to.equal(3);
    const after = await leftovers(s.redis, s.keys.prefix, needles);
    expect(after, after.join('\n')).to.deep.equal([]);
    const fresh = await chatLogin(s, { phone });
    if (fresh.outcome !== 'logged-in') expect.fail(`no login: ${fresh.outcome}`);
    expect(fresh.result.user.id).to.not.equal(userId);
  });
});
