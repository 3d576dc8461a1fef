import { Ajv } from 'ajv';
import { expect } from 'chai';
import { decodeJwt } from 'jose';
import { buildOpenApi } from '../../src/openapi/document.js';
import { fullLogin, randomEmoji, randomPhone, randomPin, sendChat } from '../helpers/flow.js';
import { evolutionMessage } from '../helpers/gateway.js';
import { eventually, get, post, request, type JsonResponse } from '../helpers/http.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startProcess, startStack, stopProcess, type Stack } from '../helpers/processes.js';
import { ADMIN } from '../ops/support.js';
import { adminLogin } from '../helpers/admin.js';
import { openSse } from '../helpers/sse.js';
import { expectDocumented, type ServedDoc } from './conformance.js';

/**
 * Real answers of a running service, each checked against the schema the document gives for
 * its path, method and status: the document is what the service does, not what it was meant to.
 */
const VERIFY_TOKEN = 'openapi-verify-token';

describe('openapi: real responses match the document', function () {
  this.timeout(60000);
  let stack: Stack;
  let served: ServedDoc;
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });

  before(async function () {
    stack = await startStack({ name: 'openapi', webs: 1, workers: 1, env: { ...ADMIN, WEBHOOK_VERIFY_TOKEN: VERIFY_TOKEN } });
    const doc = await get(stack.url, '/openapi.json');
    expect(doc.status).to.equal(200);
    served = doc.body as unknown as ServedDoc;
    ajv.addSchema(doc.body, 'doc');
  });
  after(async () => stack?.stop());

  /** `method path` of every documented operation a test below has checked an answer of */
  const checked = new Set<string>();
  function conforms(method: string, path: string, res: JsonResponse<unknown>): void {
    expectDocumented(ajv, served, method, path, res);
    checked.add(`${method} ${path}`);
  }

  it('serves the document it builds', async function () {
    const served = await get(stack.url, '/openapi.json');
    expect(served.headers.get('content-type')).to.match(/application\/json/);
    expect(served.body).to.deep.equal(JSON.parse(JSON.stringify(buildOpenApi({ version: (served.body as { info: { version: string } }).info.version }))));
  });

  it('a whole login, the session endpoints and typical errors answer as documented', async function () {
    conforms('get', '/health', await get(stack.url, '/health'));
    const jwks = await get(stack.url, '/.well-known/jwks.json');
    conforms('get', '/.well-known/jwks.json', jwks);
    const pin = randomPin();
    const emojiString = randomEmoji();
    conforms('post', '/register-pin', await post(stack.url, '/register-pin', { pin, emojiString }));
    conforms('post', '/check-login', await post(stack.url, '/check-login', { pin }));
    const hook = await sendChat(stack.url, `PIN: ${emojiString}`, { phone: randomPhone(), pushName: 'Ana Silva' });
    conforms('post', '/messaging-endpoint', hook);
    const login = await eventually(async () => {
      const r = await post<{ verified: boolean; token: string; refreshToken: string; user: { id: string } }>(stack.url, '/check-login', { pin });
      return r.body.verified ? r : undefined;
    });
    conforms('post', '/check-login', login);
    const { token, refreshToken, user } = login.body;
    conforms('get', '/profile', await get(stack.url, '/profile', token));
    const refreshed = await post<{ token: string }>(stack.url, '/refresh-token', { refreshToken }, token);
    conforms('post', '/refresh-token', refreshed);
    conforms('get', '/sessions', await get(stack.url, '/sessions', refreshed.body.token));
    const unknownSession = await request(stack.url, 'DELETE', '/sessions/no-such-session', { token: refreshed.body.token });
    expect(unknownSession.status).to.equal(404);
    conforms('delete', '/sessions/{id}', unknownSession);
    const sent = await post<{ messageId: string }>(stack.url, '/send-message', { phoneNumber: '+15551234567', message: 'hi' }, refreshed.body.token);
    conforms('post', '/send-message', sent);
    conforms('get', '/messages/{id}', await get(stack.url, `/messages/${sent.body.messageId}`, refreshed.body.token));
    const unknownMessage = await get(stack.url, '/messages/999999999', refreshed.body.token);
    expect(unknownMessage.status).to.equal(404);
    conforms('get', '/messages/{id}', unknownMessage);
    conforms('post', '/logout', await post(stack.url, '/logout', { userId: user.id }, refreshed.body.token));

    // an unknown PIN (a collected one stays collectable for COLLECT_RETRY_SECONDS)
    const notFound = await post(stack.url, '/check-login', { pin: randomPin() });
    expect(notFound.status).to.equal(404);
    conforms('post', '/check-login', notFound);
    const invalid = await post(stack.url, '/register-pin', { pin: 'x' });
    expect(invalid.status).to.equal(400);
    conforms('post', '/register-pin', invalid);
    const unauthenticated = await get(stack.url, '/profile');
    expect(unauthenticated.status).to.equal(401);
    conforms('get', '/profile', unauthenticated);
  });

  it('the answers beside the common path: a reused Idempotency-Key, the CSS assets, health while Redis is down', async function () {
    const pin = randomPin();
    const emojiString = randomEmoji();
    await post(stack.url, '/register-pin', { pin, emojiString });
    await sendChat(stack.url, `PIN: ${emojiString}`, { phone: randomPhone(), pushName: 'Ana' });
    const login = await eventually(async () => {
      const r = await post<{ verified: boolean; token: string }>(stack.url, '/check-login', { pin });
      return r.body.verified ? r : undefined;
    });
    const key = { 'idempotency-key': `reuse-${randomPin()}` };
    const first = await request(stack.url, 'POST', '/send-message', {
      json: { phoneNumber: '+15551234567', message: 'one' },
      headers: key,
      token: login.body.token,
    });
    expect(first.status).to.equal(200);
    const reused = await request(stack.url, 'POST', '/send-message', {
      json: { phoneNumber: '+15551234567', message: 'two' },
      headers: key,
      token: login.body.token,
    });
    expect(reused.status).to.equal(422);
    conforms('post', '/send-message', reused);

    for (const [path, documented] of [
      ['/demo/style.css', '/demo/{asset}'],
      ['/demo/app.js', '/demo/{asset}'],
      ['/demo/emoji/1f34e.svg', '/demo/emoji/{asset}'],
      ['/demo/emoji/no-such.svg', '/demo/emoji/{asset}'],
      ['/docs/swagger-ui.css', '/docs/{asset}'],
      ['/docs/no-such-asset.js', '/docs/{asset}'],
      ['/admin/console/console.js', '/admin/console/{asset}'],
      ['/admin/console/console.css', '/admin/console/{asset}'],
      ['/admin/console/no-such.js', '/admin/console/{asset}'],
    ] as const) {
      conforms('get', documented, await request(stack.url, 'GET', path));
    }

    const redis = await PrivateRedis.start();
    const web = await startProcess('web', { ...stack.env, REDIS_URL: redis.url });
    try {
      expect((await get(web.url, '/health')).status).to.equal(200);
      await redis.kill();
      const down = await eventually(async () => {
        const r = await get(web.url, '/health');
        return r.status === 503 ? r : undefined;
      });
      expect(down.body).to.include({ status: 'unavailable', activePins: null });
      conforms('get', '/health', down);
    } finally {
      await stopProcess(web);
      await redis.kill();
    }
  });

  it('the pages, the operator routes and the webhook doors answer as documented', async function () {
    for (const path of ['/', '/docs', '/openapi.json', '/favicon.ico', '/admin']) conforms('get', path, await request(stack.url, 'GET', path));
    const verify = (token: string) => `/messaging-endpoint?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=1158201444`;
    const handshake = await request(stack.url, 'GET', verify(VERIFY_TOKEN));
    expect(handshake.text).to.equal('1158201444');
    conforms('get', '/messaging-endpoint', handshake);
    conforms('get', '/messaging-endpoint', await request(stack.url, 'GET', verify('wrong-token')));
    conforms('get', '/metrics', await request(stack.url, 'GET', '/metrics', { token: ADMIN.METRICS_TOKEN }));
    conforms('get', '/metrics', await request(stack.url, 'GET', '/metrics', { token: 'wrong' }));
    const basic = `Basic ${Buffer.from(`${ADMIN.ADMIN_USER}:${ADMIN.ADMIN_PASSWORD}`).toString('base64')}`;
    conforms('get', '/admin/queues', await request(stack.url, 'GET', '/admin/queues', { headers: { authorization: basic } }));
    conforms('get', '/admin/queues', await request(stack.url, 'GET', '/admin/queues'));
    // Evolution's by-events door, and a path-secret door this deployment does not have
    const emojiString = randomEmoji();
    await post(stack.url, '/register-pin', { pin: randomPin(), emojiString });
    const byEvents = await request(stack.url, 'POST', '/messaging-endpoint/messages-upsert', {
      json: evolutionMessage({ text: `PIN: ${emojiString}`, phone: randomPhone() }),
    });
    expect(byEvents.status, byEvents.text).to.equal(200);
    conforms('post', '/messaging-endpoint/{first}', byEvents);
    conforms(
      'post',
      '/messaging-endpoint/{first}/{second}',
      await request(stack.url, 'POST', '/messaging-endpoint/no-such-secret-0123456789/messages-upsert', { json: {} }),
    );
    // sign out everywhere
    const login = await fullLogin(stack.url);
    conforms('delete', '/sessions', await request(stack.url, 'DELETE', '/sessions', { token: login.login.token }));
  });

  it('the admin API answers as documented: to an admin, to a person without the role, to no one', async function () {
    const admin = await adminLogin(stack.url, stack.prefix);
    const { login } = await fullLogin(stack.url);
    conforms('get', '/admin/api/v1/events', await get(stack.url, '/admin/api/v1/events?limit=5', admin.token));
    const forbidden = await get(stack.url, '/admin/api/v1/events', login.token);
    expect(forbidden.status).to.equal(403);
    conforms('get', '/admin/api/v1/events', forbidden);
    const anonymous = await get(stack.url, '/admin/api/v1/events');
    expect(anonymous.status).to.equal(401);
    conforms('get', '/admin/api/v1/events', anonymous);
    const bad = await get(stack.url, '/admin/api/v1/events?type=nonsense', admin.token);
    expect(bad.status).to.equal(400);
    conforms('get', '/admin/api/v1/events', bad);
    // the live stream: its 200 is an open event stream (its first frame read, then closed), and its refusals
    const stream = '/admin/api/v1/events/stream';
    const live = await openSse(`${stack.url}${stream}`, { token: admin.token });
    try {
      expect(live.status).to.equal(200);
      expect((await live.next())!.comment).to.equal('connected');
      conforms('get', stream, { status: live.status, headers: live.headers, body: '', text: '' });
    } finally {
      live.close();
    }
    for (const [query, token, status] of [
      ['', undefined, 401],
      ['', login.token, 403],
      ['?after=nonsense', admin.token, 400],
    ] as const) {
      const r = await openSse(`${stack.url}${stream}${query}`, { token });
      expect(r.status).to.equal(status);
      conforms('get', stream, { status: r.status, headers: r.headers, body: JSON.parse(r.text!), text: r.text! });
    }

    // the caller, and the API keys: made, listed, used, revoked (docs/accounts.md, "Who may do it")
    conforms('get', '/admin/api/v1/me', await get(stack.url, '/admin/api/v1/me', admin.token));
    conforms('get', '/admin/api/v1/me', await get(stack.url, '/admin/api/v1/me'));
    const made = await post<{ key: { id: string }; secret: string }>(
      stack.url,
      '/admin/api/v1/keys',
      { name: 'openapi', scopes: ['events:read'] },
      admin.token,
    );
    expect(made.status, made.text).to.equal(200);
    conforms('post', '/admin/api/v1/keys', made);
    const badKey = await post(stack.url, '/admin/api/v1/keys', { name: 'openapi', scopes: ['root'] }, admin.token);
    expect(badKey.status).to.equal(400);
    conforms('post', '/admin/api/v1/keys', badKey);
    conforms('get', '/admin/api/v1/keys', await get(stack.url, '/admin/api/v1/keys', admin.token));
    const asKey = await get(stack.url, '/admin/api/v1/me', made.body.secret);
    expect(asKey.status).to.equal(200);
    conforms('get', '/admin/api/v1/me', asKey);
    const keyMintsKey = await post(stack.url, '/admin/api/v1/keys', { name: 'nope', scopes: ['events:read'] }, made.body.secret);
    expect(keyMintsKey.status).to.equal(403);
    conforms('post', '/admin/api/v1/keys', keyMintsKey);
    conforms('get', '/admin/api/v1/keys', await get(stack.url, '/admin/api/v1/keys', made.body.secret));
    conforms('delete', '/admin/api/v1/keys/{id}', await request(stack.url, 'DELETE', `/admin/api/v1/keys/${made.body.key.id}`, { token: admin.token }));
    const revoked = await get(stack.url, '/admin/api/v1/me', made.body.secret);
    expect(revoked.status).to.equal(401);
    conforms('get', '/admin/api/v1/me', revoked);
    const unknownKey = await request(stack.url, 'DELETE', '/admin/api/v1/keys/0123456789abcdef', { token: admin.token });
    expect(unknownKey.status).to.equal(404);
    conforms('delete', '/admin/api/v1/keys/{id}', unknownKey);
    const malformedKey = await request(stack.url, 'DELETE', '/admin/api/v1/keys/nope', { token: admin.token });
    expect(malformedKey.status).to.equal(400);
    conforms('delete', '/admin/api/v1/keys/{id}', malformedKey);

    // people (src/http/admin-api/users.ts): found, shown, their sessions and roles
    const people = '/admin/api/v1/users';
    const id = login.user.id;
    const sid = String(decodeJwt(login.token).sid);
    const answer = async (method: string, doc: string, path: string, status: number, opts: { json?: unknown; token?: string } = {}) => {
      const res = await request(stack.url, method.toUpperCase(), path, { token: admin.token, ...opts });
      expect(res.status, `${method} ${path}: ${res.text}`).to.equal(status);
      conforms(method, doc, res);
    };
    await answer('get', people, `${people}?q=${encodeURIComponent(login.user.id)}`, 200);
    await answer('get', people, `${people}?limit=1`, 200);
    await answer('get', people, `${people}?limit=0`, 400);
    await answer('get', people, people, 403, { token: login.token });
    await answer('get', `${people}/{id}`, `${people}/${id}`, 200);
    await answer('get', `${people}/{id}`, `${people}/noSuchPerson0000000000`, 404);
    await answer('get', `${people}/{id}/sessions`, `${people}/${id}/sessions`, 200);
    await answer('get', `${people}/{id}/sessions`, `${people}/bad`, 400);
    await answer('put', `${people}/{id}/roles`, `${people}/${id}/roles`, 200, { json: { roles: ['support'] } });
    await answer('put', `${people}/{id}/roles`, `${people}/${id}/roles`, 400, { json: { roles: ['Not A Role'] } });
    await answer('post', `${people}/{id}/roles`, `${people}/${id}/roles`, 200, { json: { role: 'billing' } });
    await answer('post', `${people}/{id}/roles`, `${people}/noSuchPerson0000000000/roles`, 404, { json: { role: 'billing' } });
    await answer('delete', `${people}/{id}/roles/{role}`, `${people}/${id}/roles/support`, 200);
    await answer('delete', `${people}/{id}/roles/{role}`, `${people}/${id}/roles/user`, 400);
    await answer('delete', `${people}/{id}/sessions/{sid}`, `${people}/${id}/sessions/noSuchSession`, 404);
    await answer('delete', `${people}/{id}/sessions/{sid}`, `${people}/${id}/sessions/${sid}`, 200);
    await answer('delete', `${people}/{id}/sessions`, `${people}/${id}/sessions`, 200);
    await answer('delete', `${people}/{id}/sessions`, `${people}/${id}/sessions`, 401, { token: undefined });

    // block and unblock (docs/accounts.md, "Block"): a person blocked, then unblocked
    const blockPath = '/admin/api/v1/users/{id}/block';
    const at = (uid: string) => `/admin/api/v1/users/${uid}/block`;
    const blocked = await request(stack.url, 'POST', at(login.user.id), { json: { reason: 'openapi check' }, token: admin.token });
    expect(blocked.status, blocked.text).to.equal(200);
    conforms('post', blockPath, blocked);
    const unblocked = await request(stack.url, 'DELETE', at(login.user.id), { token: admin.token });
    expect(unblocked.status, unblocked.text).to.equal(200);
    conforms('delete', blockPath, unblocked);
    const unknownUser = await request(stack.url, 'POST', at('noSuchPerson0000000000'), { json: {}, token: admin.token });
    expect(unknownUser.status).to.equal(404);
    conforms('post', blockPath, unknownUser);
    const tooLong = await request(stack.url, 'POST', at(admin.user.id), { json: { reason: 'x'.repeat(201) }, token: admin.token });
    expect(tooLong.status).to.equal(400);
    conforms('post', blockPath, tooLong);
    const notAdmin = await request(stack.url, 'DELETE', at(admin.user.id), { token: (await fullLogin(stack.url)).login.token });
    expect(notAdmin.status).to.equal(403);
    conforms('delete', blockPath, notAdmin);
    const nobody = await request(stack.url, 'DELETE', at(admin.user.id));
    expect(nobody.status).to.equal(401);
    conforms('delete', blockPath, nobody);
    // export and erase (docs/accounts.md): a person's, by an admin; then by the person themselves
    const { login: person } = await fullLogin(stack.url);
    const exported = await get(stack.url, `/admin/api/v1/users/${person.user.id}/export`, admin.token);
    expect(exported.status).to.equal(200);
    conforms('get', '/admin/api/v1/users/{id}/export', exported);
    conforms('get', '/admin/api/v1/users/{id}/export', await get(stack.url, `/admin/api/v1/users/${person.user.id}/export`, login.token));
    conforms('get', '/admin/api/v1/users/{id}/export', await get(stack.url, '/admin/api/v1/users/no.such/export', admin.token));
    const erased = await request(stack.url, 'DELETE', `/admin/api/v1/users/${person.user.id}`, { token: admin.token });
    expect(erased.status).to.equal(200);
    conforms('delete', '/admin/api/v1/users/{id}', erased);
    const gone = await request(stack.url, 'DELETE', `/admin/api/v1/users/${person.user.id}`, { token: admin.token });
    expect(gone.status).to.equal(404);
    conforms('delete', '/admin/api/v1/users/{id}', gone);
    conforms('delete', '/admin/api/v1/users/{id}', await request(stack.url, 'DELETE', `/admin/api/v1/users/${person.user.id}`));
    // the person's own, with a login of its own (the others above stay signed in)
    const { login: self } = await fullLogin(stack.url);
    const own = await get(stack.url, '/account/export', self.token);
    expect(own.status).to.equal(200);
    conforms('get', '/account/export', own);
    conforms('get', '/account/export', await get(stack.url, '/account/export'));
    const deleted = await request(stack.url, 'DELETE', '/account', { token: self.token });
    expect(deleted.status).to.equal(200);
    conforms('delete', '/account', deleted);
    const dead = await request(stack.url, 'DELETE', '/account', { token: self.token });
    expect(dead.status).to.equal(401);
    conforms('delete', '/account', dead);
  });

  it('serves the reference page and its assets from the service (no CDN)', async function () {
    const page = await request(stack.url, 'GET', '/docs');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/text\/html/);
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).to.be.greaterThan(1);
    for (const src of sources) {
      expect(src, 'same origin').to.match(/^\/docs\//);
      const asset = await request(stack.url, 'GET', src);
      expect(asset.status, src).to.equal(200);
      expect(asset.text.length, src).to.be.greaterThan(10);
    }
    expect((await request(stack.url, 'GET', '/docs/..%2Fpackage.json')).status).to.equal(404);
  });

  it('every documented operation was answered and checked above', function () {
    const operations = Object.entries(served.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    expect(
      operations.filter((o) => !checked.has(o)),
      'documented but never checked against a real answer',
    ).to.deep.equal([]);
  });
});
