import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { loggablePath } from '../../src/messaging/webhook-path.js';
import { evolutionMessage } from '../helpers/gateway.js';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { eventually, post, request, type JsonResponse } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { evolutionJwt, sign } from './support.js';

const HMAC_SECRET = 'doors-meta-app-secret-0123456789';
const JWT_KEY = 'doors-evolution-jwt-key-0123456789';
const BEARER_KEY = 'doors-static-bearer-key-0123456789';
const PATH_SECRET = 'doorsPathSecret_0123456789abcdef';
const AUTH_ENV = { WEBHOOK_SECRET: HMAC_SECRET, WEBHOOK_JWT_KEY: JWT_KEY, WEBHOOK_BEARER_KEY: BEARER_KEY, WEBHOOK_PATH_SECRET: PATH_SECRET };

type Post = (path: string, raw: string, headers?: Record<string, string>) => Promise<JsonResponse>;

const postTo =
  (base: string): Post =>
  (path, raw, headers = {}) =>
    request(base, 'POST', path, { raw, headers: { 'content-type': 'application/json', ...headers } });

/** A token signed with the key, claims as given (to try what Evolution would never send). */
const token = (claims: Record<string, unknown>, header: Record<string, unknown> = {}): string => {
  const defined = Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== undefined));
  // without an iat in the claims, noTimestamp keeps jsonwebtoken from adding one
  return jwt.sign(defined, JWT_KEY, { algorithm: 'HS256', noTimestamp: !('iat' in defined), header: { alg: 'HS256', ...header } });
};
const now = (): number => Math.floor(Date.now() / 1000);

/**
 * The webhook answers every path and credential as documented: by-events paths, the secret
 * segment, the static bearer key, Evolution's JWT with its claims, event kinds checked before
 * shapes, and bodies over the limit dropped with a 200. No secret reaches any log line, access
 * lines included.
 */
describe('messaging: the webhook door, paths and credentials', function () {
  let stack: Stack;

  before(async function () {
    this.timeout(120000);
    stack = await startStack({ name: 'doors', env: { ...AUTH_ENV, CHAT_REPLIES: 'false', LOG_LEVEL: 'http' } });
  });
  after(async function () {
    this.timeout(30000);
    await stack?.stop();
  });

  const body = (text = 'hello there'): string => JSON.stringify(evolutionMessage({ text }));
  const hook: Post = (path, raw, headers) => postTo(stack.url)(path, raw, headers);

  async function loginVia(path: string, headers: Record<string, string>): Promise<LoginBody> {
    const pin = randomPin();
    const emoji = randomEmoji();
    expect((await post(stack.url, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
    const r = await postTo(stack.url)(path, JSON.stringify(evolutionMessage({ text: `PIN: ${emoji}`, phone: randomPhone() })), headers);
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ accepted: 1 });
    return eventually(async () => {
      const c = await post<LoginBody>(stack.url, '/check-login', { pin });
      return c.body.verified ? c.body : undefined;
    });
  }

  describe('paths', function () {
    it('signs in through a by-events path, with the secret segment, and with both', async function () {
      expect((await loginVia('/messaging-endpoint/messages-upsert', { authorization: `Bearer ${BEARER_KEY}` })).verified).to.equal(true);
      expect((await loginVia(`/messaging-endpoint/${PATH_SECRET}`, {})).verified).to.equal(true);
      expect((await loginVia(`/messaging-endpoint/${PATH_SECRET}/messages-upsert`, {})).verified).to.equal(true);
      expect((await loginVia(`/messaging-endpoint/${PATH_SECRET}/messages-upsert/`, {})).verified).to.equal(true);
      expect((await loginVia(`/messaging-endpoint/${PATH_SECRET}//messages-upsert`, {})).verified).to.equal(true);
    });

    it('answers every path', async function () {
      const raw = body();
      // a by-events URL built on a base URL ending in `/` has a doubled slash (Evolution never retries a 404)
      const doubled = [
        '/messaging-endpoint//messages-upsert',
        `/messaging-endpoint/${PATH_SECRET}//messages-upsert`,
        `/messaging-endpoint//${PATH_SECRET}//messages-upsert`,
      ];
      for (const path of [
        '/messaging-endpoint',
        '/messaging-endpoint/messages-upsert',
        '/messaging-endpoint/contacts-upsert',
        `/messaging-endpoint/${PATH_SECRET}/messages-upsert`,
        ...doubled,
      ]) {
        expect((await hook(path, raw, { authorization: `Bearer ${BEARER_KEY}` })).status, path).to.equal(200);
      }
    });

    it('an event suffix names the event when the body does not', async function () {
      const raw = JSON.stringify({ ...evolutionMessage({ text: 'hi' }), event: undefined });
      const r = await hook(`/messaging-endpoint/${PATH_SECRET}/messages-upsert`, raw);
      expect(r.body).to.include({ accepted: 1 });
    });
  });

  describe('event kind before shape', function () {
    it('answers 200, ignored, to events whose data is an array or of any other shape', async function () {
      const events: [string, unknown][] = [
        ['contacts.upsert', [{ id: '5511999999999@s.whatsapp.net', pushName: 'A' }]],
        ['contacts.update', [{ id: '5511999999999@s.whatsapp.net', profilePicUrl: null }]],
        ['chats.upsert', [{ remoteJid: '5511999999999@s.whatsapp.net' }]],
        ['messages.set', []],
        ['CONNECTION_UPDATE', { state: 'open' }],
        ['qrcode.updated', 'a string'],
        ['presence.update', null],
      ];
      for (const [event, data] of events) {
        const r = await hook('/messaging-endpoint', JSON.stringify({ event, instance: 'main', data }), { authorization: `Bearer ${BEARER_KEY}` });
        expect(r.status, `${event}: ${r.text}`).to.equal(200);
        expect(r.body, event).to.deep.equal({ received: true, accepted: 0, ignored: 1 });
      }
    });
  });

  describe('credentials', function () {
    const raw = body();
    const expect401 = (r: JsonResponse): void => {
      expect(r.status, r.text).to.equal(401);
      expect(r.body.error).to.equal('AUTHENTICATION_FAILED');
    };

    it('static bearer key: right passes, wrong, empty or another scheme fails', async function () {
      expect((await hook('/messaging-endpoint', raw, { authorization: `Bearer ${BEARER_KEY}` })).status).to.equal(200);
      expect401(await hook('/messaging-endpoint', raw, { authorization: `Bearer ${BEARER_KEY}x` }));
      expect401(await hook('/messaging-endpoint', raw, { authorization: `Bearer ${BEARER_KEY.slice(0, -1)}` }));
      expect401(await hook('/messaging-endpoint', raw, { authorization: `Basic ${BEARER_KEY}` }));
      expect401(await hook('/messaging-endpoint', raw, { authorization: 'Bearer' }));
    });

    it('path secret: right passes; a wrong one fails even beside a valid signature', async function () {
      expect((await hook(`/messaging-endpoint/${PATH_SECRET}`, raw)).status).to.equal(200);
      expect401(await hook(`/messaging-endpoint/${PATH_SECRET}x`, raw));
      expect401(await hook(`/messaging-endpoint/wrongSecret_0123456789/messages-upsert`, raw, { 'x-hub-signature-256': sign(raw, HMAC_SECRET) }));
      expect401(await hook('/messaging-endpoint/whatever', raw));
      expect((await postTo(stack.url)('/messaging-endpoint/a/b/c', raw)).status).to.equal(404);
    });

    it("Evolution's JWT: the token Evolution makes passes", async function () {
      expect((await hook('/messaging-endpoint', raw, { authorization: `Bearer ${evolutionJwt(JWT_KEY)}` })).status).to.equal(200);
      // as jsonwebtoken signs it by default in Evolution (header typ JWT, iat from the payload)
      const t = jwt.sign({ iat: now(), exp: now() + 600, app: 'evolution', action: 'webhook' }, JWT_KEY, { algorithm: 'HS256' });
      expect((await hook('/messaging-endpoint', raw, { authorization: `Bearer ${t}` })).status).to.equal(200);
    });

    it("Evolution's JWT: wrong claims or token type fail", async function () {
      const base = { iat: now(), exp: now() + 600, app: 'evolution', action: 'webhook' };
      const bad: [string, string][] = [
        ['no app', token({ ...base, app: undefined })],
        ['another app', token({ ...base, app: 'pin-auth' })],
        ['another action', token({ ...base, action: 'login' })],
        ['no iat', token({ ...base, iat: undefined })],
        ['iat in the future', token({ ...base, iat: now() + 300, exp: now() + 900 })],
        ['lifetime over 600 s', token({ ...base, exp: base.iat + 3600 })],
        ['no exp', token({ ...base, exp: undefined })],
        ['expired', token({ ...base, iat: now() - 700, exp: now() - 100 })],
        ['our access token claims', token({ ...base, typ: 'access', sub: 'u1', sid: 's1', jti: 'j1' })],
        ['header typ of another kind', token(base, { typ: 'at+jwt' })],
        ['another key', jwt.sign(base, `${JWT_KEY}x`, { algorithm: 'HS256' })],
        ['HS512', jwt.sign(base, JWT_KEY, { algorithm: 'HS512' })],
      ];
      for (const [what, t] of bad) {
        const r = await hook('/messaging-endpoint', raw, { authorization: `Bearer ${t}` });
        expect(r.status, what).to.equal(401);
      }
    });
  });

  describe('bodies over the limit', function () {
    it('are read to the end, dropped, answered 200 (no gateway retry) and counted', async function () {
      const big = JSON.stringify({ event: 'messages.upsert', instance: 'main', data: { message: { imageMessage: { base64: 'A'.repeat(3 * 1024 * 1024) } } } });
      const r = await hook('/messaging-endpoint', big, { authorization: `Bearer ${BEARER_KEY}` });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({ received: true, accepted: 0, ignored: 0, dropped: 'too-large' });
      expect(r.headers.get('connection')).to.not.equal('close');
      await stack.webs[0]!.waitForOutput(/webhook body over the limit dropped/);
    });
  });

  describe('logs (after the requests above)', function () {
    const secrets = [HMAC_SECRET, JWT_KEY, BEARER_KEY, PATH_SECRET, PATH_SECRET.slice(0, 12), 'wrongSecret_0123456789', 'eyJ'];

    it('no secret, token or secret path in any line of any process, access lines included', async function () {
      await eventually(async () => (stack.webs[0]!.output().includes('/messaging-endpoint/:secret/messages-upsert') ? true : undefined), 5000);
      const output = [...stack.webs, ...stack.workers].map((p) => p.output()).join('\n');
      expect(output).to.match(/"path":"\/messaging-endpoint\/:secret\/messages-upsert"/);
      for (const secret of secrets) expect(output.includes(secret), `log output holds ${secret}`).to.equal(false);
    });

    it('the access line names webhook paths by their label', function () {
      for (const path of [
        `/messaging-endpoint/${PATH_SECRET}`,
        `/messaging-endpoint/${PATH_SECRET}/messages-upsert`,
        '/messaging-endpoint/wrongSecret_0123456789',
        '/messaging-endpoint/a/b/c/d',
      ]) {
        const label = loggablePath(path);
        for (const secret of secrets) expect(label.includes(secret), label).to.equal(false);
      }
      expect(loggablePath(`/messaging-endpoint/${PATH_SECRET}/messages-upsert`)).to.equal('/messaging-endpoint/:secret/messages-upsert');
      expect(loggablePath('/messaging-endpoint/messages-upsert')).to.equal('/messaging-endpoint/messages-upsert');
    });
  });
});
