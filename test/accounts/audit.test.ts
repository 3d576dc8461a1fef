import { expect } from 'chai';
import { AuditTrail } from '../../src/accounts/audit.js';
import type { Services } from '../../src/services.js';
import { startServices, stopServices } from '../helpers/services.js';

/** The audit trail (docs/accounts.md, "The audit trail"), in process on the shared Redis under a prefix of its own. */
describe('accounts: the audit trail', function () {
  let services: Services;
  before(async function () {
    services = await startServices('audit', {});
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
    const audit = new AuditTrail(services.redis, services.keys, { days: 1, maxEvents: 1000 });
    const u = `t${Date.now()}`;
    const id = await audit.record({ type: 'login.failed', userId: u });
    await services.redis.xdel(services.keys.audit(), id);
    expect(await audit.forUser(u)).to.deep.equal([]);
    expect(await services.redis.zcard(services.keys.auditOfUser(u))).to.equal(0);
  });
});
