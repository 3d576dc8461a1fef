import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { AdminScope } from '../../src/accounts/actor.js';
import type { AuditRecord } from '../../src/accounts/audit.js';
import { LoginProcessor } from '../../src/auth/login.js';
import { adminAccess, adminOf, type AdminNeed } from '../../src/http/admin-api/auth.js';
import { createApp } from '../../src/http/app.js';
import type { AppContext } from '../../src/http/context.js';
import type { InboundJob } from '../../src/queues/jobs.js';
import type { Caller } from '../../src/registrations/service.js';
import type { Services } from '../../src/services.js';
import { TEST_JWT_SECRET } from '../core/support.js';
import { grantAdmin } from '../helpers/admin.js';
import { randomEmoji, randomPhone, randomPin } from '../helpers/flow.js';
import { request, type JsonResponse } from '../helpers/http.js';
import { runNode } from '../helpers/processes.js';
import { REDIS_URL, testRedis } from '../helpers/redis.js';
import { startServices, stopServices } from '../helpers/services.js';

const CLI = 'dist/src/bin/accounts.js';
const API = '/admin/api/v1';
const me: Caller = { ip: '127.0.0.1', via: 'http' };
const KEY_TEXT = /^pak_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/m;
/** what a route of each need answers when the door lets the caller through */
const NEEDS: AdminNeed[] = ['users:read', 'users:write', 'events:read', 'any', 'session'];

interface Door {
  services: Services;
  url: string;
  server: http.Server;
  cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  call(method: string, path: string, credential?: string, opts?: { json?: unknown; headers?: Record<string, string> }): Promise<JsonResponse>;
  /** a person signed in through the real login chain (this process), by phone */
  login(phone: string): Promise<{ token: string; userId: string }>;
  /** an API key made by the command line: its id and secret */
  cliKey(name: string, scopes: string): Promise<{ id: string; secret: string }>;
  audited(type: AuditRecord['type']): Promise<AuditRecord[]>;
  close(): Promise<void>;
}

/**
 * The service's app in this process (with one test route per need behind the real door, at
 * /admin/api/v1/test/<need>) on a port of its own; the command line as a child process on the
 * same Redis and KEY_PREFIX.
 */
async function startDoor(name: string, env: Record<string, string> = {}): Promise<Door> {
  const services = await startServices(name, { JWT_SECRET: TEST_JWT_SECRET, LOGIN_CONFIRMATION: 'false', ...env });
  const app = createApp(services, {
    pages: (router) => {
      for (const need of NEEDS) {
        router.get(`${API}/test/${need.replace(':', '-')}`, adminAccess(services, need), (ctx: AppContext) => {
          ctx.body = { success: true, actor: adminOf(ctx).actor };
        });
      }
    },
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const processor = new LoginProcessor(services.scripts, services.keys, services.tokens, services.sessions, {
    graceSeconds: 120,
    confirm: false,
    stepwise: false,
  });
  const door: Door = {
    services,
    url,
    server,
    cli: (...args) => runNode([CLI, ...args], { REDIS_URL, KEY_PREFIX: services.keys.prefix }),
    call: (method, path, credential, opts = {}) =>
      request(url, method, path, { ...opts, headers: { ...(credential !== undefined ? { authorization: `Bearer ${credential}` } : {}), ...opts.headers } }),
    async login(phone) {
      const emoji = randomEmoji();
      await services.registrations.register(randomPin(), emoji, me);
      const job: InboundJob = {
        message: { provider: 'evolution', id: randomPin().slice(4), phone, text: `PIN: ${emoji}`, displayName: 'Ada Admin' },
        nonce: randomPin(),
        receivedAt: Date.now(),
      };
      const out = await processor.process(job);
      if (out.outcome !== 'logged-in') throw new Error(`login: ${out.outcome}`);
      return { token: out.result.token, userId: out.result.user.id };
    },
    async cliKey(keyName, scopes) {
      const r = await door.cli('keys', 'create', '--name', keyName, '--scopes', scopes);
      expect(r.code, r.stderr).to.equal(0);
      const secret = KEY_TEXT.exec(r.stdout)?.[0];
      expect(secret, r.stdout).to.be.a('string');
      return { id: secret!.slice(4, 20), secret: secret! };
    },
    async audited(type) {
      return (await services.audit.list({ types: [type], limit: 200 })).events;
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stopServices(services);
    },
  };
  return door;
}

/** The phone in another spelling than the gateway's: spaces, dashes, no plus. */
const respelled = (phone: string): string => `${phone.slice(1, 3)} ${phone.slice(3, 7)}-${phone.slice(7)}`;

describe('accounts: API keys and the admin door (who may do it)', function () {
  this.timeout(30000);
  let door: Door;
  let admin: { token: string; userId: string };
  let adminPhone: string;

  before(async function () {
    door = await startDoor('keys');
    adminPhone = randomPhone();
    admin = await door.login(adminPhone);
  });
  after(async () => door?.close());

  it('the first admin: grant-admin finds a signed-in person by phone in any format (the command line), and the door reads the role live', async function () {
    // signed in, not yet an admin: the door is closed (403), and that is an audited failure
    const before = await door.call('GET', `${API}/me`, admin.token);
    expect(before.status, before.text).to.equal(403);
    expect(before.body.error).to.equal('FORBIDDEN');
    const notAdmin = (await door.audited('admin.auth-failed')).find((e) => e.userId === admin.userId);
    expect(notAdmin?.detail.reason).to.equal('not-admin');

    const granted = await door.cli('grant-admin', respelled(adminPhone));
    expect(granted.code, granted.stderr).to.equal(0);
    expect(granted.stdout).to.include(`KEY_PREFIX ${door.services.keys.prefix}`);
    expect(granted.stdout).to.include(`user ${admin.userId} is now an admin (roles: user, admin)`);
    const again = await door.cli('grant-admin', admin.userId);
    expect(again.code).to.equal(0);
    expect(again.stdout).to.include('was an admin already');

    const who = await door.call('GET', `${API}/me`, admin.token);
    expect(who.status, who.text).to.equal(200);
    expect(who.body).to.deep.equal({ success: true, actor: { kind: 'admin', userId: admin.userId }, scopes: ['events:read', 'users:read', 'users:write'] });
    const changes = (await door.audited('account.roles-changed')).filter((e) => e.userId === admin.userId);
    expect(changes.map((e) => [e.actor, e.detail.via, e.detail.before, e.detail.after])).to.deep.equal([['system', 'cli', 'user', 'user,admin']]);

    // revoke-admin closes the door at once, with the token still valid; granted back for the rest
    const revoked = await door.cli('revoke-admin', adminPhone);
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(revoked.stdout).to.include('is no admin any more (roles: user)');
    expect((await door.call('GET', `${API}/me`, admin.token)).status).to.equal(403);
    await grantAdmin(door.services.keys.prefix, admin.userId);
    expect((await door.call('GET', `${API}/me`, admin.token)).status).to.equal(200);
  });

  it('the command line refuses bad input with a reason and exit 1 (nothing found) or 2 (wrong usage)', async function () {
    const cases: [string[], number, RegExp][] = [
      [[], 2, /name a command/],
      [['make-admin', 'x'], 2, /unknown command "make-admin"/],
      [['grant-admin'], 2, /needs a phone number or user id/],
      [['grant-admin', '--name', 'x', 'abc'], 2, /takes no --name/],
      [['grant-admin', '+44 7700 000000'], 1, /no account has the phone \+447700000000: the person must sign in once first/],
      [['grant-admin', 'no such id'], 1, /is no phone number and no user id/],
      [['revoke-admin', 'AAAAAAAAAAAAAAAAAAAAAA'], 1, /no account has the id AAAAAAAAAAAAAAAAAAAAAA/],
      // a user id may start with '-' (base64url): still the person, never an option
      [['grant-admin', '-AAAAAAAAAAAAAAAAAAAAA'], 1, /no account has the id -AAAAAAAAAAAAAAAAAAAAA/],
      [['keys'], 2, /keys needs create, list or revoke/],
      [['keys', 'create', '--scopes', 'users:read'], 2, /keys create needs --name/],
      [['keys', 'create', '--name', 'ci'], 2, /keys create needs --scopes/],
      [['keys', 'create', '--name', 'ci', '--scopes', 'users:read,root'], 2, /--scopes must each be one of users:read, users:write, events:read/],
      [['keys', 'create', '--name', '', '--scopes', 'users:read'], 2, /--name must be 1 to 64 characters/],
      [['keys', 'create', '--name', 'ci', '--scopes', 'users:read', '--admin'], 2, /Unknown option '--admin'/],
      [['keys', 'revoke'], 2, /keys revoke needs a key id/],
      [['keys', 'revoke', 'pak_1234'], 2, /A key id is 16 hexadecimal digits/],
      [['keys', 'revoke', '0123456789abcdef'], 1, /No such API key/],
    ];
    // independent and refused before any change: run together
    const answers = await Promise.all(cases.map(([args]) => door.cli(...args)));
    for (const [i, [args, code, message]] of cases.entries()) {
      const r = answers[i]!;
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(code);
      expect(r.stderr, args.join(' ')).to.match(message);
      expect(r.stderr, args.join(' ')).to.match(code === 2 ? /\nusage: npm run accounts -- <command>/ : /^accounts: [^\n]+\n$/);
    }
    // npm keeps the flags when `--` is forgotten: the refusal says so
    const viaNpm = await runNode([CLI, 'keys', 'create'], { REDIS_URL, KEY_PREFIX: door.services.keys.prefix, npm_config_name: 'ci' });
    expect(viaNpm.stderr).to.match(/put -- after npm run accounts/);
    const help = await door.cli('--help');
    expect(help.code).to.equal(0);
    expect(help.stdout).to.match(/^usage: npm run accounts -- <command>/);
    expect((await door.services.apiKeys.list()).length, 'no key was made by a refused command').to.equal(0);
  });

  it('a key from the command line: shown once, listed without its secret, never stored in clear; it opens the door with its scopes', async function () {
    const created = await door.cli('keys', 'create', '--name', 'SIEM export', '--scopes', 'events:read,users:read');
    expect(created.code, created.stderr).to.equal(0);
    const secret = KEY_TEXT.exec(created.stdout)![0];
    const id = secret.slice(4, 20);
    expect(created.stdout).to.include(`API key ${id} created (name "SIEM export", scopes events:read,users:read)`);

    const listed = await door.cli('keys', 'list');
    expect(listed.code).to.equal(0);
    expect(listed.stdout).to.match(new RegExp(`^${id} {2}"SIEM export" {2}events:read,users:read {2}created \\S+ by system {2}last used never {2}live$`, 'm'));
    expect(listed.stdout).to.not.include(secret.slice(21));

    const who = await door.call('GET', `${API}/me`, secret);
    expect(who.status, who.text).to.equal(200);
    expect(who.body).to.deep.equal({ success: true, actor: { kind: 'key', keyId: id }, scopes: ['events:read', 'users:read'] });
    const view = await door.services.apiKeys.get(id);
    expect(view.lastUsedAt, 'its use is noted').to.be.a('string');
    expect(view).to.not.have.property('hash');

    // neither the secret nor the whole key is in any key name or value under the prefix
    const redis = testRedis();
    try {
      let cursor = '0';
      let seen = 0;
      const secretPart = secret.slice(21);
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', `${door.services.keys.prefix}:*`, 'COUNT', 1000);
        cursor = next;
        for (const k of found) {
          seen++;
          expect(k).to.not.include(secretPart);
          const type = await redis.type(k);
          const dump =
            type === 'string'
              ? await redis.get(k)
              : type === 'hash'
                ? JSON.stringify(await redis.hgetall(k))
                : type === 'zset'
                  ? JSON.stringify(await redis.zrange(k, '0', '-1', 'WITHSCORES'))
                  : type === 'stream'
                    ? JSON.stringify(await redis.xrange(k, '-', '+'))
                    : type === 'set'
                      ? JSON.stringify(await redis.smembers(k))
                      : type === 'list'
                        ? JSON.stringify(await redis.lrange(k, 0, -1))
                        : '';
          expect(dump, k).to.not.include(secretPart);
        }
      } while (cursor !== '0');
      expect(seen, 'the scan saw the key record and the audit trail at least').to.be.greaterThan(2);
      expect(await redis.hget(door.services.keys.apiKey(id), 'hash')).to.match(/^[0-9a-f]{64}$/);
    } finally {
      redis.disconnect();
    }
    const made = (await door.audited('key.created')).find((e) => e.detail.keyId === id);
    expect(made?.actor).to.equal('system');
    expect(made?.detail).to.include({ via: 'cli', name: 'SIEM export', scopes: 'events:read,users:read' });
  });

  it('the scope matrix: a key does what its scopes allow and nothing else (403), never manages keys; an admin does everything', async function () {
    const sets: AdminScope[][] = [['users:read'], ['users:write'], ['events:read'], ['users:read', 'users:write', 'events:read']];
    const person = await door.login(randomPhone());
    for (const scopes of sets) {
      const { secret } = await door.cliKey(`matrix ${scopes.join('+')}`, scopes.join(','));
      for (const need of NEEDS) {
        const r = await door.call('GET', `${API}/test/${need.replace(':', '-')}`, secret);
        const allowed = need === 'any' || (need !== 'session' && scopes.includes(need));
        expect(r.status, `${scopes.join(',')} → ${need}: ${r.text}`).to.equal(allowed ? 200 : 403);
        if (!allowed) expect(r.body.error).to.equal('FORBIDDEN');
      }
      // the real routes: people need users:read to be read and users:write to be changed (a
      // read-only key can't change anyone), the trail events:read; key management is never a key's
      expect((await door.call('GET', `${API}/events`, secret)).status).to.equal(scopes.includes('events:read') ? 200 : 403);
      expect((await door.call('GET', `${API}/users?limit=1`, secret)).status).to.equal(scopes.includes('users:read') ? 200 : 403);
      expect((await door.call('GET', `${API}/users/${admin.userId}`, secret)).status).to.equal(scopes.includes('users:read') ? 200 : 403);
      const role = await door.call('POST', `${API}/users/${admin.userId}/roles`, secret, { json: { role: 'support' } });
      expect(role.status, role.text).to.equal(scopes.includes('users:write') ? 200 : 403);
      const ends = await door.call('DELETE', `${API}/users/${admin.userId}/sessions/nosuchsession`, secret);
      expect(ends.status, ends.text).to.equal(scopes.includes('users:write') ? 404 : 403);
      // not even users:write makes an admin
      expect((await door.call('POST', `${API}/users/${person.userId}/roles`, secret, { json: { role: 'admin' } })).status).to.equal(403);
      expect((await door.call('GET', `${API}/keys`, secret)).status).to.equal(403);
      const mint = await door.call('POST', `${API}/keys`, secret, { json: { name: 'escalate', scopes: ['users:write'] } });
      expect(mint.status, mint.text).to.equal(403);
      expect(mint.body.message).to.match(/not by an API key/);
    }
    const { id: other } = await door.cliKey('victim', 'users:read');
    const { secret: readOnly } = await door.cliKey('read only', 'users:read');
    expect((await door.call('DELETE', `${API}/keys/${other}`, readOnly)).status).to.equal(403);
    expect((await door.services.apiKeys.get(other)).revokedAt, 'a key cannot revoke another').to.equal(null);
    expect(
      (await door.services.apiKeys.list()).some((k) => k.name === 'escalate'),
      'no key minted by a key',
    ).to.equal(false);
    for (const need of NEEDS) expect((await door.call('GET', `${API}/test/${need.replace(':', '-')}`, admin.token)).status, need).to.equal(200);
    expect((await door.call('GET', `${API}/me`, person.token)).status, 'still no admin').to.equal(403);
  });

  it('an admin makes, lists and revokes keys over HTTP; a revoked key is 401 at once; both audited with the admin', async function () {
    const made = await door.call('POST', `${API}/keys`, admin.token, { json: { name: ' nightly sync ', scopes: ['users:read', 'users:write'] } });
    expect(made.status, made.text).to.equal(200);
    const { key, secret } = made.body as { key: { id: string; name: string; createdBy: string; revokedAt: null }; secret: string };
    expect(secret).to.match(KEY_TEXT).and.include(`pak_${key.id}_`);
    expect(key).to.include({ name: 'nightly sync', createdBy: `admin:${admin.userId}`, revokedAt: null });
    expect(made.headers.get('cache-control')).to.equal('no-store');

    const list = await door.call('GET', `${API}/keys`, admin.token);
    expect(list.status).to.equal(200);
    expect(list.text).to.not.include(secret.slice(21));
    expect((list.body.keys as { id: string }[]).map((k) => k.id)[0], 'newest first').to.equal(key.id);

    expect((await door.call('GET', `${API}/test/users-write`, secret)).status).to.equal(200);
    const revoked = await door.call('DELETE', `${API}/keys/${key.id}`, admin.token);
    expect(revoked.status, revoked.text).to.equal(200);
    expect(revoked.body).to.deep.equal({ success: true });
    const refused = await door.call('GET', `${API}/me`, secret);
    expect(refused.status).to.equal(401);
    expect(refused.body.error).to.equal('AUTHENTICATION_FAILED');
    expect((await door.call('DELETE', `${API}/keys/${key.id}`, admin.token)).status, 'revoking again is no error').to.equal(200);
    expect(await door.services.redis.hget(door.services.keys.apiKey(key.id), 'hash'), 'a revoked key keeps no digest').to.equal(null);
    expect(await door.services.redis.pttl(door.services.keys.apiKey(key.id)), 'its record expires').to.be.greaterThan(0);

    // revoked from the command line works the same
    const { id: cliId, secret: cliSecret } = await door.cliKey('cli revoked', 'events:read');
    const r = await door.cli('keys', 'revoke', cliId);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include(`API key ${cliId} ("cli revoked") revoked`);
    expect((await door.cli('keys', 'revoke', cliId)).stdout).to.include('was revoked already');
    expect((await door.call('GET', `${API}/events`, cliSecret)).status).to.equal(401);
    expect((await door.cli('keys', 'list')).stdout).to.match(new RegExp(`^${cliId} .* revoked \\S+Z$`, 'm'));

    const createdEvent = (await door.audited('key.created')).find((e) => e.detail.keyId === key.id);
    expect(createdEvent?.actor).to.equal(`admin:${admin.userId}`);
    expect(createdEvent?.requestId).to.be.a('string');
    expect(createdEvent?.ipGroup).to.be.a('string');
    const revokedEvents = (await door.audited('key.revoked')).filter((e) => e.detail.keyId === key.id || e.detail.keyId === cliId);
    expect(revokedEvents.map((e) => e.actor).sort(), 'once each, with the actor').to.deep.equal([`admin:${admin.userId}`, 'system'].sort());
  });

  it('bad key input and bad key ids answer 400 / 404, never a key', async function () {
    const before = (await door.services.apiKeys.list()).length;
    const bodies: unknown[] = [
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['users:read', 'users:read'] },
      { name: 'x', scopes: ['admin'] },
      { name: 'x', scopes: 'users:read' },
      { name: '', scopes: ['users:read'] },
      { name: 'x'.repeat(65), scopes: ['users:read'] },
      { name: 'a\u0000b', scopes: ['users:read'] },
      { name: 7, scopes: ['users:read'] },
      { scopes: ['users:read'] },
      { name: 'x', scopes: ['users:read'], createdBy: 'system' },
      ['users:read'],
    ];
    for (const json of bodies) {
      const r = await door.call('POST', `${API}/keys`, admin.token, { json });
      expect(r.status, `${JSON.stringify(json)}: ${r.text}`).to.equal(400);
      expect(r.body.error).to.equal('VALIDATION_ERROR');
    }
    const form = await door.call('POST', `${API}/keys`, admin.token, { headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).to.equal(400);
    const huge = await door.call('POST', `${API}/keys`, admin.token, { json: { name: 'x', scopes: ['users:read'], pad: 'x'.repeat(20_000) } });
    expect(huge.status).to.equal(413);
    expect((await door.call('DELETE', `${API}/keys/not-an-id`, admin.token)).status).to.equal(400);
    const unknown = await door.call('DELETE', `${API}/keys/0123456789abcdef`, admin.token);
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error).to.equal('NOT_FOUND');
    expect((await door.services.apiKeys.list()).length).to.equal(before);
  });

  it('wrong credentials are 401 and audited (reason, IP group, request id), never with what was presented', async function () {
    const { id, secret } = await door.cliKey('to tamper', 'users:read');
    const tampered = `pak_${id}_${'A'.repeat(43)}`;
    const wrong = [tampered, `pak_0123456789abcdef_${'B'.repeat(43)}`, 'pak_short', 'not.a.jwt', secret.toUpperCase()];
    for (const credential of wrong) {
      const r = await door.call('GET', `${API}/me`, credential, { headers: { 'x-request-id': `bad-${wrong.indexOf(credential)}` } });
      expect(r.status, credential).to.equal(401);
      expect(r.body.error).to.equal('AUTHENTICATION_FAILED');
    }
    const basic = await door.call('GET', `${API}/me`, undefined, { headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } });
    expect(basic.status).to.equal(401);
    const none = await door.call('GET', `${API}/me`);
    expect(none.status).to.equal(401);

    const failures = await door.audited('admin.auth-failed');
    const byRequest = new Map(failures.map((e) => [e.requestId, e]));
    expect(byRequest.get('bad-0')?.detail).to.include({ reason: 'unknown-key', keyId: id, path: `${API}/me`, method: 'GET' });
    expect(byRequest.get('bad-1')?.detail.reason).to.equal('unknown-key');
    expect(byRequest.get('bad-3')?.detail.reason).to.equal('bad-token');
    expect(byRequest.get('bad-0')?.ipGroup).to.equal('127.0.0.1');
    const all = JSON.stringify(failures);
    for (const credential of wrong) expect(all).to.not.include(credential.slice(-20));
    // no credential at all is a first visit, not a failure: not recorded
    expect(failures.filter((e) => e.requestId === none.headers.get('x-request-id'))).to.deep.equal([]);
  });

  it('refuses cross-site requests (Sec-Fetch-Site, a foreign or null Origin) whatever they carry; same-origin and machines pass', async function () {
    const keysBefore = (await door.services.apiKeys.list()).length;
    const failuresBefore = (await door.audited('admin.auth-failed')).length;
    const foreign: Record<string, string>[] = [
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'https://evil.example' },
      { origin: 'null' },
    ];
    for (const headers of foreign) {
      const read = await door.call('GET', `${API}/me`, admin.token, { headers });
      expect(read.status, JSON.stringify(headers)).to.equal(403);
      expect(read.body.error).to.equal('FORBIDDEN');
      const mint = await door.call('POST', `${API}/keys`, admin.token, { headers, json: { name: 'csrf', scopes: ['users:write'] } });
      expect(mint.status, JSON.stringify(headers)).to.equal(403);
    }
    expect((await door.services.apiKeys.list()).length, 'no key made cross-site').to.equal(keysBefore);
    expect((await door.audited('admin.auth-failed')).length, 'a refused origin is no credential failure').to.equal(failuresBefore);
    const same = await door.call('GET', `${API}/me`, admin.token, { headers: { 'sec-fetch-site': 'same-origin', origin: door.url } });
    expect(same.status, same.text).to.equal(200);
    expect((await door.call('GET', `${API}/me`, admin.token, { headers: { 'sec-fetch-site': 'none' } })).status).to.equal(200);
    expect((await door.call('GET', `${API}/me`, admin.token)).status).to.equal(200);
  });

  it('nothing under /admin may be framed (frame-ancestors none, X-Frame-Options DENY); the admin API is never cached', async function () {
    for (const path of [`${API}/me`, `${API}/keys`, '/admin', '/admin/queues', '/admin/anything']) {
      const r = await door.call('GET', path, admin.token);
      expect(r.headers.get('x-frame-options'), path).to.equal('DENY');
      expect(r.headers.get('content-security-policy'), path).to.match(/frame-ancestors 'none'/);
    }
    const api = await door.call('GET', `${API}/me`, admin.token);
    expect(api.headers.get('cache-control')).to.equal('no-store');
    expect(api.headers.get('content-security-policy')).to.equal("default-src 'none';frame-ancestors 'none'");
    // the person's API keeps its headers
    expect((await door.call('GET', '/health')).headers.get('x-frame-options')).to.equal('SAMEORIGIN');
  });
});

describe('accounts: the admin door throttles failures per IP group and every action per actor', function () {
  this.timeout(30000);
  let door: Door;
  before(async () => (door = await startDoor('keys-throttle', { RATE_ADMIN_FAILURES_PER_15_MINUTES: '3', RATE_ADMIN_ACTIONS_PER_MINUTE: '4' })));
  after(async () => door?.close());

  it('an actor past its budget gets 429 with Retry-After; another actor is not held back', async function () {
    const a = await door.cliKey('busy', 'events:read');
    const b = await door.cliKey('quiet', 'events:read');
    const answers: number[] = [];
    for (let i = 0; i < 5; i++) answers.push((await door.call('GET', `${API}/me`, a.secret)).status);
    expect(answers).to.deep.equal([200, 200, 200, 200, 429]);
    const limited = await door.call('GET', `${API}/events`, a.secret);
    expect(limited.status).to.equal(429);
    expect(limited.body.error).to.equal('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
    expect((await door.call('GET', `${API}/me`, b.secret)).status).to.equal(200);
  });

  it('past the failure budget an IP group gets 429 even with a right key; only the counted failures are audited', async function () {
    const good = await door.cliKey('good', 'users:read');
    const before = (await door.audited('admin.auth-failed')).length;
    for (let i = 0; i < 3; i++) expect((await door.call('GET', `${API}/me`, `pak_0123456789abcdef_${'C'.repeat(43)}`)).status).to.equal(401);
    const held = await door.call('GET', `${API}/me`, good.secret);
    expect(held.status, held.text).to.equal(429);
    expect(held.body.error).to.equal('RATE_LIMITED');
    expect(Number(held.headers.get('retry-after'))).to.be.within(1, 15 * 60);
    expect((await door.call('GET', `${API}/me`, 'pak_0123456789abcdef_x')).status, 'a further guess is not even judged').to.equal(429);
    expect((await door.audited('admin.auth-failed')).length - before).to.equal(3);
    // the same budget as the dashboard's wrong passwords (one key in Redis per IP group)
    const counted = await door.services.redis.keys(`${door.services.keys.rateLimit('adminfail')}*`);
    expect(counted.length).to.equal(1);
  });
});
