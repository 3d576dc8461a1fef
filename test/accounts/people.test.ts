import { expect } from 'chai';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { applyRoles, MAX_ROLES } from '../../src/accounts/roles.js';
import { LoginProcessor } from '../../src/auth/login.js';
import type { InboundJob, InboundMessage } from '../../src/queues/jobs.js';
import type { LoginResult } from '../../src/registrations/login-result.js';
import type { Caller } from '../../src/registrations/service.js';
import type { Services } from '../../src/services.js';
import { TEST_JWT_SECRET } from '../core/support.js';
import { adminLogin } from '../helpers/admin.js';
import { fullLogin, randomEmoji, randomPhone, randomPin } from '../helpers/flow.js';
import { get, post, request } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { ClusterTopology } from '../helpers/redis-topology.js';
import { startServices, stopServices } from '../helpers/services.js';
import { Browser } from '../oidc/browser.js';
import { chatTo, RelyingParty, testClient } from '../oidc/relying-party.js';

const me: Caller = { ip: '127.0.0.1', via: 'http' };
const newLid = (): string => String(100000000000000 + Math.floor(Math.random() * 8e14));

/** A person signed in by the worker's LoginProcessor in this process, then indexed as the worker does after a sign-in. */
async function signIn(s: Services, sender: Partial<InboundMessage>, displayName: string): Promise<LoginResult> {
  const logins = new LoginProcessor(s.scripts, s.keys, s.tokens, s.sessions, {
    graceSeconds: 120,
    confirm: false,
    stepwise: s.config.redis.kind === 'cluster',
  });
  const emoji = randomEmoji();
  await s.registrations.register(randomPin(), emoji, me);
  const job: InboundJob = {
    message: { provider: 'evolution', id: randomPin().slice(4), phone: null, text: `PIN: ${emoji}`, displayName, ...sender },
    nonce: randomPin(),
    receivedAt: Date.now(),
  };
  const out = await logins.process(job);
  if (out.outcome !== 'logged-in') throw new Error(`not signed in: ${out.outcome}`);
  expect(await s.directory.index(out.result.user.id)).to.equal(true);
  return out.result;
}

const ids = (page: { users: { id: string }[] }): string[] => page.users.map((u) => u.id);

/**
 * The people part of the admin API (docs/accounts.md, "Finding people", "Sessions", "Roles"):
 * the directory and roles in this process on one Redis and on a 3-primary cluster, then the
 * routes of a running service (web node and worker, an OpenID client) as an admin uses them.
 */
describe('accounts: people (directory, sessions, roles)', function () {
  this.timeout(120000);

  describe('the directory and roles in this process', function () {
    let s: Services;
    before(async function () {
      s = await startServices('people', { JWT_SECRET: TEST_JWT_SECRET });
    });
    after(async () => stopServices(s));

    it('finds a person by user id, phone in any format, LID (with or without @lid), BSUID, and a name prefix (case and accents aside)', async function () {
      const lid = newLid();
      const bsuid = `BR.${newLid()}`;
      const jose = await signIn(s, { phone: '+525512345678' }, 'José Álvarez');
      const ida = await signIn(s, { lid }, 'Ida Lid');
      const bea = await signIn(s, { userId: bsuid }, 'Bea Suid');
      const find = (q: string) => s.directory.find({ q });
      expect(ids(await find(jose.user.id))).to.deep.equal([jose.user.id]);
      // WhatsApp's old Mexican spelling, spaces, dashes and parentheses: one number
      for (const q of ['5215512345678', '+52 (55) 1234-5678', '525512345678']) expect(ids(await find(q)), q).to.deep.equal([jose.user.id]);
      expect(ids(await find(lid))).to.deep.equal([ida.user.id]);
      expect(ids(await find(`${lid}@lid`))).to.deep.equal([ida.user.id]);
      expect(ids(await find(bsuid))).to.deep.equal([bea.user.id]);
      // the name and the surname, by prefix, whatever the case and the accents
      for (const q of ['jose', 'JOSÉ Á', 'alv', 'Álvarez']) expect(ids(await find(q)), q).to.include(jose.user.id);
      expect(ids(await find('jose b'))).to.not.include(jose.user.id);
      const summary = (await find(jose.user.id)).users[0]!;
      expect(summary).to.deep.include({ id: jose.user.id, name: 'José', surname: 'Álvarez', phone: '+525512345678', roles: ['user'], blocked: false });
      expect(Date.parse(summary.createdAt)).to.be.closeTo(Date.now(), 60000);
      expect(Date.parse(summary.lastLoginAt!)).to.be.at.least(Date.parse(summary.createdAt));
      expect((await find(lid)).users[0]!.phone).to.equal(null);
      // nobody: an empty page, never an error
      expect(await find('+44 20 0000 0000')).to.deep.equal({ users: [], next: null });
    });

    it('lists everyone newest first, a page at a time; a cursor is opaque and checked, the limit bounded', async function () {
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await signIn(s, { phone: randomPhone() }, `Page Person${i}`)).user.id);
      const seen: string[] = [];
      const times: number[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 50; pages++) {
        const page = await s.directory.find({ limit: 2, cursor });
        expect(page.users.length).to.be.at.most(2);
        seen.push(...ids(page));
        times.push(...page.users.map((u) => Date.parse(u.createdAt)));
        if (page.next === null) break;
        cursor = page.next;
      }
      expect(new Set(seen).size, 'no one twice').to.equal(seen.length);
      expect(times).to.deep.equal([...times].sort((a, b) => b - a));
      // the newest five are the ones just made
      expect([...seen.slice(0, 5)].sort()).to.deep.equal([...made].sort());
      // the name search pages too
      const first = await s.directory.find({ q: 'page p', limit: 3 });
      expect(first.users).to.have.length(3);
      const rest = await s.directory.find({ q: 'page p', limit: 3, cursor: first.next! });
      expect([...ids(first), ...ids(rest)].sort()).to.deep.equal([...made].sort());
      for (const bad of [
        { cursor: 'not-a-cursor' },
        { cursor: first.next! },
        { q: 'other', cursor: first.next! },
        { limit: 0 },
        { limit: 101 },
        { q: 'x'.repeat(201) },
      ]) {
        const err = await s.directory.find(bad).catch((e: unknown) => e);
        expect(err, JSON.stringify(bad)).to.have.property('code', 'VALIDATION_ERROR');
      }
    });

    it('the backfill indexes accounts made before the directory, once; unindex takes a person out; an entry without a record is dropped', async function () {
      const old = 'olderAccount0000000000';
      await s.redis.hset(s.keys.user(old), 'id', old, 'name', 'Olga', 'surname', 'Older', 'roles', '["user"]', 'createdAt', '1000');
      expect(ids(await s.directory.find({ q: 'olga' }))).to.deep.equal([]);
      expect(await s.directory.backfill()).to.be.at.least(1);
      expect(ids(await s.directory.find({ q: 'olga' }))).to.deep.equal([old]);
      expect(ids(await s.directory.find({ q: 'older' }))).to.deep.equal([old]);
      // done once: the next start does nothing
      expect(await s.directory.backfill()).to.equal(0);
      // an erase's part
      await s.directory.unindex(old);
      expect(await s.directory.holds(old)).to.equal(false);
      expect(ids(await s.directory.find({ q: 'olga' }))).to.deep.equal([]);
      // a record gone without unindex: skipped and dropped when read
      await s.directory.index(old);
      await s.redis.del(s.keys.user(old));
      expect(ids(await s.directory.find({ q: 'olga' }))).to.deep.equal([]);
      expect(await s.directory.holds(old)).to.equal(false);
    });

    it('roles: names validated, `user` kept, at most 16, audited with before and after; a key cannot make an admin; concurrent changes all land; the next refresh carries them', async function () {
      const person = await signIn(s, { phone: randomPhone() }, 'Rolf Roles');
      const id = person.user.id;
      const admin = { kind: 'admin' as const, userId: 'theAdmin00000000000000' };
      expect(await s.roles.change(id, { op: 'add', role: 'support' }, admin, { requestId: 'req-1' })).to.deep.equal(['user', 'support']);
      expect(await s.roles.change(id, { op: 'set', roles: ['billing', 'billing'] }, admin)).to.deep.equal(['user', 'billing']);
      expect(await s.roles.change(id, { op: 'remove', role: 'billing' }, admin)).to.deep.equal(['user']);
      // no change: no event
      expect(await s.roles.change(id, { op: 'remove', role: 'billing' }, admin)).to.deep.equal(['user']);
      const events = (await s.audit.list({ userId: id, types: ['account.roles-changed'] })).events;
      expect(events.map((e) => e.detail)).to.deep.equal([
        { before: 'user,billing', after: 'user' },
        { before: 'user,support', after: 'user,billing' },
        { before: 'user', after: 'user,support' },
      ]);
      expect(events[2]).to.include({ actor: 'admin:theAdmin00000000000000', requestId: 'req-1' });
      const refused = async (p: Promise<unknown>) =>
        p.then(
          () => 'ok',
          (e: { code?: string }) => e.code,
        );
      for (const bad of ['Admin', '', '9lives', 'a'.repeat(33), 'with space', 'ünï']) {
        expect(await refused(s.roles.change(id, { op: 'add', role: bad }, admin)), bad).to.equal('VALIDATION_ERROR');
      }
      expect(await refused(s.roles.change(id, { op: 'remove', role: 'user' }, admin))).to.equal('VALIDATION_ERROR');
      const many = Array.from({ length: MAX_ROLES }, (_, i) => `r${i}`);
      expect(await refused(s.roles.change(id, { op: 'set', roles: many }, admin))).to.equal('VALIDATION_ERROR');
      expect(applyRoles([], { op: 'set', roles: many.slice(1) })).to.have.length(MAX_ROLES);
      expect(await refused(s.roles.change('noSuchUser000000000000', { op: 'add', role: 'x' }, admin))).to.equal('NOT_FOUND');
      // a machine's key may give other roles, never admin
      expect(await refused(s.roles.change(id, { op: 'add', role: 'admin' }, { kind: 'key', keyId: 'k1' }))).to.equal('FORBIDDEN');
      expect(await s.roles.change(id, { op: 'add', role: 'ops' }, { kind: 'key', keyId: 'k1' })).to.deep.equal(['user', 'ops']);
      // two admins at once: both roles land (compare-and-set)
      await Promise.all(['one', 'two', 'three'].map((role) => s.roles.change(id, { op: 'add', role }, admin)));
      expect((await s.directory.record(id))!.roles.sort()).to.deep.equal(['one', 'ops', 'three', 'two', 'user']);
      // the session's next refresh is signed with the stored roles
      const claims = s.tokens.verify(person.token, 'access');
      expect(claims.roles).to.deep.equal(['user']);
      const pair = JSON.parse(await s.sessions.refreshWithToken(claims, person.refreshToken)) as { token: string };
      expect(decodeJwt(pair.token).roles).to.have.members(['user', 'ops', 'one', 'two', 'three']);
    });
  });

  describe('on a 3-primary Redis cluster', function () {
    let topo: ClusterTopology | undefined;
    let s: Services | undefined;
    before(async function () {
      topo = await ClusterTopology.start({ primaries: 3 });
      s = await startServices('people-cl', { ...topo.env(), JWT_SECRET: TEST_JWT_SECRET });
    });
    after(async function () {
      await s?.close();
      await topo?.stop();
    });

    it('a role change is one step on the user slot: the next refreshed token and the directory show it; the backfill scans every primary', async function () {
      const c = s!;
      const person = await signIn(c, { phone: randomPhone() }, 'Clara Cluster');
      const id = person.user.id;
      const admin = { kind: 'admin' as const, userId: 'clusterAdmin0000000000' };
      expect(await c.roles.change(id, { op: 'set', roles: ['auditor'] }, admin)).to.deep.equal(['user', 'auditor']);
      const pair = JSON.parse(await c.sessions.refreshWithToken(c.tokens.verify(person.token, 'access'), person.refreshToken)) as { token: string };
      expect(decodeJwt(pair.token).roles).to.deep.equal(['user', 'auditor']);
      expect((await c.directory.find({ q: id })).users[0]!.roles).to.deep.equal(['user', 'auditor']);
      expect((await c.audit.list({ userId: id, types: ['account.roles-changed'] })).events).to.have.length(1);
      // accounts spread over the primaries are all found by one backfill
      const others = [];
      for (let i = 0; i < 6; i++) others.push((await signIn(c, { phone: randomPhone() }, `Spread Person${i}`)).user.id);
      await Promise.all([id, ...others].map((u) => c.directory.unindex(u)));
      expect(ids(await c.directory.find({ q: 'spread' }))).to.deep.equal([]);
      expect(await c.directory.backfill({ force: true, batch: 10 })).to.equal(7);
      expect(ids(await c.directory.find({ q: 'spread', limit: 100 })).sort()).to.deep.equal([...others].sort());
      const perPrimary = await topo!.keysPerPrimary();
      expect(perPrimary.filter((p) => p.keys > 0).length, 'keys on every primary').to.equal(3);
    });
  });

  describe('the routes of a running service (web node, worker, an OpenID client)', function () {
    let stack: InProcessStack;
    let rp: RelyingParty;
    let adminToken: string;
    let adminId: string;
    const api = '/admin/api/v1';
    before(async function () {
      stack = await startStack({ inProcess: true, name: 'people-http', env: { CHAT_REPLIES: 'false', OIDC_CLIENTS: JSON.stringify([testClient()]) } });
      rp = await RelyingParty.discover(`http://localhost:${stack.webs[0]!.port}/oidc`, chatTo(stack.url));
      const admin = await adminLogin(stack.url, stack.prefix);
      adminToken = admin.token;
      adminId = admin.user.id;
    });
    after(async () => stack?.stop());

    const call = (method: string, path: string, opts: { json?: unknown; token?: string } = {}) =>
      request<Record<string, unknown>>(stack.url, method, `${api}${path}`, { token: adminToken, ...opts });

    it('GET /users finds a person the worker signed in, by phone in another spelling, by name; checks its input', async function () {
      const phone = randomPhone();
      const { login } = await fullLogin(stack.url, { phone, pushName: 'Nadia Näsström' });
      const spaced = `${phone.slice(0, 3)} ${phone.slice(3, 7)}-${phone.slice(7)}`;
      for (const q of [spaced, phone.slice(1), 'nadia NAS', 'nasstrom', login.user.id]) {
        const res = await call('GET', `/users?q=${encodeURIComponent(q)}`);
        expect(res.status, res.text).to.equal(200);
        expect(
          (res.body.users as { id: string }[]).map((u) => u.id),
          q,
        ).to.include(login.user.id);
      }
      const all = await call('GET', '/users?limit=1');
      expect(all.status).to.equal(200);
      expect((all.body.users as unknown[]).length).to.equal(1);
      expect(all.body.next).to.be.a('string');
      for (const bad of ['limit=0', 'limit=abc', 'limit=1&limit=2', 'cursor=%7B%7D', `q=${'x'.repeat(201)}`, 'sort=name']) {
        const res = await call('GET', `/users?${bad}`);
        expect(res.status, bad).to.equal(400);
        expect(res.body.error, bad).to.equal('VALIDATION_ERROR');
      }
      // a person without the role, and no one
      expect((await call('GET', '/users', { token: login.token })).status).to.equal(403);
      expect((await request(stack.url, 'GET', `${api}/users`)).status).to.equal(401);
    });

    it('GET /users/:id: identifiers, roles, created, last sign-in, app and OpenID sessions, the latest events; unknown 404, malformed 400, others 403', async function () {
      const who = { phone: randomPhone(), pushName: 'Otto Openid' };
      const browser = new Browser();
      const { url, verifier, state } = await rp.authorize({ scope: 'openid roles offline_access' });
      const callback = await rp.signIn(browser, url, who);
      const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
      const sub = tokens.claims()!.sub;
      const { login } = await fullLogin(stack.url, who);
      expect(login.user.id).to.equal(sub);
      const res = await call('GET', `/users/${sub}`);
      expect(res.status, res.text).to.equal(200);
      const user = res.body.user as Record<string, unknown> & { sessions: Record<string, unknown>[]; events: unknown[] };
      expect(user).to.deep.include({ id: sub, name: 'Otto', surname: 'Openid', phone: who.phone, roles: ['user'], blocked: false, blockedAt: null });
      expect(user.identifiers).to.deep.equal([{ kind: 'phone', value: who.phone }]);
      expect(Date.parse(String(user.lastLoginAt))).to.be.at.least(Date.parse(String(user.createdAt)));
      expect(user.sessions.map((x) => x.kind).sort()).to.deep.equal(['app', 'oidc']);
      expect(user.sessions.find((x) => x.kind === 'oidc')!.client).to.deep.equal({ id: 'test-app', name: 'Test App' });
      expect(user.sessions.find((x) => x.kind === 'app')!.client).to.equal(null);
      expect(user.events).to.be.an('array');
      // the OpenID client asked for `roles`: userinfo has them
      expect((await oidc.fetchUserInfo(rp.config, tokens.access_token, sub)).roles).to.deep.equal(['user']);

      expect((await call('GET', '/users/noSuchPerson0000000000')).body.error).to.equal('NOT_FOUND');
      for (const bad of ['short', 'has%20space', `${'x'.repeat(65)}`]) expect((await call('GET', `/users/${bad}`)).status, bad).to.equal(400);
      expect((await call('GET', `/users/${adminId}`, { token: login.token })).status).to.equal(403);
      expect((await request(stack.url, 'GET', `${api}/users/${sub}`)).status).to.equal(401);
    });

    it('sessions: listed, one ended (its token refused, audited with the admin and the request id), another person’s id 404, all ended', async function () {
      const who = { phone: randomPhone(), pushName: 'Sven Sessions' };
      const a = (await fullLogin(stack.url, who)).login;
      const b = (await fullLogin(stack.url, who)).login;
      const other = (await fullLogin(stack.url)).login;
      const listed = await call('GET', `/users/${a.user.id}/sessions`);
      expect(listed.status, listed.text).to.equal(200);
      const sids = (listed.body.sessions as { id: string }[]).map((x) => x.id);
      expect(sids).to.have.length(2);
      const aSid = decodeJwt(a.token).sid as string;
      expect(sids).to.include(aSid);
      const otherSid = decodeJwt(other.token).sid as string;
      // another person's session through this person's path: as unknown
      const foreign = await call('DELETE', `/users/${a.user.id}/sessions/${otherSid}`);
      expect(foreign.status).to.equal(404);
      expect(foreign.body.error).to.equal('SESSION_NOT_FOUND');
      expect((await get(stack.url, '/profile', other.token)).status).to.equal(200);
      expect((await call('DELETE', `/users/${a.user.id}/sessions/bad%20id`)).status).to.equal(400);
      // a person without the role can't end anyone's
      expect((await call('DELETE', `/users/${a.user.id}/sessions/${aSid}`, { token: other.token })).status).to.equal(403);
      const ended = await request(stack.url, 'DELETE', `${api}/users/${a.user.id}/sessions/${aSid}`, {
        token: adminToken,
        headers: { 'x-request-id': 'people-end-one' },
      });
      expect(ended.status, ended.text).to.equal(200);
      expect(ended.body).to.deep.equal({ success: true, closed: 1 });
      expect((await get(stack.url, '/profile', a.token)).status).to.equal(401);
      expect((await get(stack.url, '/profile', b.token)).status).to.equal(200);
      const all = await call('DELETE', `/users/${a.user.id}/sessions`);
      expect(all.body).to.deep.equal({ success: true, closed: 1 });
      expect((await get(stack.url, '/profile', b.token)).status).to.equal(401);
      expect((await call('DELETE', '/users/noSuchPerson0000000000/sessions')).status).to.equal(404);
      const events = await get<{ events: { type: string; actor: string; requestId: string | null; detail: Record<string, unknown> }[] }>(
        stack.url,
        `${api}/events?userId=${a.user.id}&type=session.ended`,
        adminToken,
      );
      const byAdmin = events.body.events.filter((e) => e.actor === `admin:${adminId}`);
      expect(byAdmin.map((e) => e.detail.kind)).to.deep.equal(['all', 'app']);
      expect(byAdmin[1]!.requestId).to.equal('people-end-one');
    });

    it('roles over HTTP: set, add, remove; bad input 400, unknown 404, non-admin 403; the next refresh, the next login and OpenID userinfo carry them', async function () {
      const who = { phone: randomPhone(), pushName: 'Rita Roles' };
      const { login } = await fullLogin(stack.url, who);
      const id = login.user.id;
      const put = await call('PUT', `/users/${id}/roles`, { json: { roles: ['support'] } });
      expect(put.status, put.text).to.equal(200);
      expect(put.body).to.deep.equal({ success: true, roles: ['user', 'support'] });
      expect((await call('POST', `/users/${id}/roles`, { json: { role: 'billing' } })).body.roles).to.deep.equal(['user', 'support', 'billing']);
      expect((await call('DELETE', `/users/${id}/roles/support`)).body.roles).to.deep.equal(['user', 'billing']);
      for (const [method, path, json] of [
        ['PUT', `/users/${id}/roles`, { roles: ['Bad Name'] }],
        ['PUT', `/users/${id}/roles`, { roles: 'support' }],
        ['PUT', `/users/${id}/roles`, { roles: ['a'], extra: 1 }],
        ['PUT', `/users/${id}/roles`, { roles: Array.from({ length: 16 }, (_, i) => `r${i}`) }],
        ['POST', `/users/${id}/roles`, {}],
        ['POST', `/users/${id}/roles`, { role: 'x'.repeat(40) }],
        ['DELETE', `/users/${id}/roles/user`, undefined],
        ['DELETE', `/users/${id}/roles/NOPE`, undefined],
      ] as [string, string, unknown][]) {
        const res = await call(method, path, json === undefined ? {} : { json });
        expect(res.status, `${method} ${path} ${JSON.stringify(json)}: ${res.text}`).to.equal(400);
        expect(res.body.error).to.equal('VALIDATION_ERROR');
      }
      const notJson = await request(stack.url, 'POST', `${api}/users/${id}/roles`, {
        token: adminToken,
        raw: 'role=x',
        headers: { 'content-type': 'text/plain' },
      });
      expect(notJson.status).to.equal(400);
      const huge = await call('PUT', `/users/${id}/roles`, { json: { roles: ['a'], pad: 'x'.repeat(20_000) } });
      expect(huge.status).to.equal(413);
      for (const path of [`/users/${id}/roles/..%2Fadmin`, `/users/${id}/roles/admin%00`, `/users/..%2F${id}/roles/x`]) {
        expect((await call('DELETE', path)).status, path).to.be.oneOf([400, 404]);
      }
      // a role the person does not have: nothing changes, nothing is audited
      expect((await call('DELETE', `/users/${id}/roles/never-had`)).body.roles).to.deep.equal(['user', 'billing']);
      expect((await call('POST', '/users/noSuchPerson0000000000/roles', { json: { role: 'x' } })).status).to.equal(404);
      // machines: a read key finds people but changes nothing; a write key gives roles, never admin
      const key = async (scopes: string[]): Promise<string> => {
        const made = await post<{ secret: string }>(stack.url, `${api}/keys`, { name: `people-${scopes.join('-')}`, scopes }, adminToken);
        expect(made.status, made.text).to.equal(200);
        return made.body.secret;
      };
      const [reader, writer] = [await key(['users:read']), await key(['users:write'])];
      expect((await call('GET', `/users?q=${id}`, { token: reader })).status).to.equal(200);
      expect((await call('POST', `/users/${id}/roles`, { json: { role: 'support' }, token: reader })).status).to.equal(403);
      expect((await call('DELETE', `/users/${id}/sessions`, { token: reader })).status).to.equal(403);
      expect((await call('POST', `/users/${id}/roles`, { json: { role: 'admin' }, token: writer })).status).to.equal(403);
      expect((await call('PUT', `/users/${id}/roles`, { json: { roles: ['admin'] }, token: writer })).status).to.equal(403);
      expect((await call('GET', `/users/${id}`, { token: writer })).status, 'write is not read').to.equal(403);
      expect((await call('GET', `/users/${id}/sessions`, { token: adminToken })).status).to.equal(200);
      // a person can't give themselves a role
      expect((await call('POST', `/users/${id}/roles`, { json: { role: 'admin' }, token: login.token })).status).to.equal(403);
      // the session's next refresh carries the roles, and so does the next sign-in
      const refreshed = await post<{ token: string }>(stack.url, '/refresh-token', { refreshToken: login.refreshToken }, login.token);
      expect(refreshed.status, refreshed.text).to.equal(200);
      expect(decodeJwt(refreshed.body.token).roles).to.deep.equal(['user', 'billing']);
      const again = (await fullLogin(stack.url, who)).login;
      expect(again.user.roles).to.deep.equal(['user', 'billing']);
      expect(decodeJwt(again.token).roles).to.deep.equal(['user', 'billing']);
      const events = (
        await get<{ events: { actor: string; detail: Record<string, string> }[] }>(
          stack.url,
          `${api}/events?userId=${id}&type=account.roles-changed`,
          adminToken,
        )
      ).body.events;
      expect(events.map((e) => e.detail.after)).to.deep.equal(['user,billing', 'user,support,billing', 'user,support']);
      expect(new Set(events.map((e) => e.actor))).to.deep.equal(new Set([`admin:${adminId}`]));

      // an OpenID client: the roles claim only for scope roles, as stored now, and after its refresh
      const browser = new Browser();
      const asked = await rp.authorize({ scope: 'openid roles offline_access' });
      const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(await rp.signIn(browser, asked.url, who)), {
        pkceCodeVerifier: asked.verifier,
        expectedState: asked.state,
      });
      expect((await oidc.fetchUserInfo(rp.config, tokens.access_token, id)).roles).to.deep.equal(['user', 'billing']);
      await call('POST', `/users/${id}/roles`, { json: { role: 'vip' } });
      const renewed = await oidc.refreshTokenGrant(rp.config, tokens.refresh_token!);
      expect((await oidc.fetchUserInfo(rp.config, renewed.access_token, id)).roles).to.deep.equal(['user', 'billing', 'vip']);
      const plain = await rp.login(who, new Browser());
      expect(await oidc.fetchUserInfo(rp.config, plain.tokens.access_token, id)).to.not.have.property('roles');
    });
  });
});
