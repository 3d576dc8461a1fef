import { expect } from 'chai';
import type { Queue } from 'bullmq';
import jwt from 'jsonwebtoken';
import { cloudMessage, evolutionMessage } from '../helpers/gateway.js';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { eventually, post, request } from '../helpers/http.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startProcess, startStack, stopProcess, type ServiceProcess, type Stack } from '../helpers/processes.js';
import { evolutionJwt, jobCounts, postWebhook, queueOf, sign } from './support.js';

const SECRET = 'meta-app-secret-for-tests';
const JWT_KEY = 'evolution-jwt-key-for-tests';
const VERIFY_TOKEN = 'verify-token-for-tests';

/** Meta escapes every non-ASCII character of the JSON it signs (lowercase hex). */
const metaEscaped = (json: string): string => json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

describe('messaging: the webhook door (auth, handshake, shapes, ignored events)', function () {
  let stack: Stack;
  let open: ServiceProcess;
  let inbound: Queue;

  before(async function () {
    this.timeout(120000);
    stack = await startStack({
      name: 'webhook',
      env: { WEBHOOK_SECRET: SECRET, WEBHOOK_JWT_KEY: JWT_KEY, WEBHOOK_VERIFY_TOKEN: VERIFY_TOKEN, CHAT_REPLIES: 'false' },
    });
    // a node of the same deployment with no webhook method and no verify token configured
    open = await stack.addWeb({ WEBHOOK_SECRET: '', WEBHOOK_JWT_KEY: '', WEBHOOK_VERIFY_TOKEN: '' });
    inbound = queueOf(stack.prefix, 'inbound');
  });
  after(async function () {
    this.timeout(30000);
    await inbound?.close();
    await stack?.stop();
  });

  /** Registers a PIN, lets `send` deliver the chat message, and waits for the verified login. */
  async function loginThrough(send: (text: string) => Promise<{ status: number; text: string }>): Promise<LoginBody> {
    const pin = randomPin();
    const emoji = randomEmoji();
    const reg = await post(stack.url, '/register-pin', { pin, emojiString: emoji });
    expect(reg.status, reg.text).to.equal(200);
    const hook = await send(`PIN: ${emoji}`);
    expect(hook.status, hook.text).to.equal(200);
    return eventually(async () => {
      const r = await post<LoginBody>(stack.url, '/check-login', { pin });
      if (r.status !== 200) throw new Error(`check-login ${r.status}: ${r.text}`);
      return r.body.verified ? r.body : undefined;
    });
  }

  const expect401 = (r: { status: number; body: Record<string, unknown> }): void => {
    expect(r.status).to.equal(401);
    expect(r.body).to.include({ success: false, error: 'AUTHENTICATION_FAILED' });
  };

  describe('X-Hub-Signature-256', function () {
    it('accepts a signature over the exact bytes: pretty-printed, emoji escaped as Meta sends them, and logs in', async function () {
      const phone = randomPhone();
      const login = await loginThrough((text) => {
        const raw = metaEscaped(JSON.stringify(cloudMessage({ text, phone, name: 'Zoë Ångström' }), null, 2));
        expect(raw).to.match(/\\ud83c|\\ud83d|\\ud83e/); // really escaped
        return postWebhook(stack.url, raw, { 'x-hub-signature-256': sign(raw, SECRET) });
      });
      expect(login.user).to.include({ phone, name: 'Zoë' });
    });

    it('checks the bytes as sent, not a re-serialisation (whitespace and raw UTF-8 emoji)', async function () {
      const raw = JSON.stringify(evolutionMessage({ text: 'PIN: 🍎🚀🐱 ❤️' }), null, 4);
      const compact = JSON.stringify(JSON.parse(raw));
      expect(sign(compact, SECRET)).to.not.equal(sign(raw, SECRET));
      expect401(await postWebhook(stack.url, raw, { 'x-hub-signature-256': sign(compact, SECRET) }));
      const ok = await postWebhook(stack.url, raw, { 'x-hub-signature-256': sign(raw, SECRET) });
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body).to.include({ accepted: 1 });
    });

    it('refuses a wrong, missing, malformed or wrong-length signature, and stores nothing', async function () {
      const before = await jobCounts(inbound);
      const raw = JSON.stringify(evolutionMessage({ text: 'PIN: 🍎' }));
      const good = sign(raw, SECRET);
      const wrongValue = `sha256=${good.slice(7, 8) === 'a' ? 'b' : 'a'}${good.slice(8)}`;
      for (const header of [
        wrongValue,
        sign(raw, 'another-secret'),
        good.slice(0, -1),
        `${good}0`,
        `${good}ab`,
        good.slice(7),
        `sha1=${good.slice(7)}`,
        `sha256=${'zz'.repeat(32)}`,
        '',
      ]) {
        expect401(await postWebhook(stack.url, raw, header === '' ? {} : { 'x-hub-signature-256': header }));
      }
      expect401(await postWebhook(stack.url, `${raw} `, { 'x-hub-signature-256': good }));
      expect((await jobCounts(inbound)).total).to.equal(before.total);
    });
  });

  describe("Evolution API's jwt_key (Authorization: Bearer JWT)", function () {
    it('accepts an unexpired token made with the key, and logs in', async function () {
      const phone = randomPhone();
      const login = await loginThrough((text) =>
        postWebhook(stack.url, JSON.stringify(evolutionMessage({ text, phone, pushName: 'Ana Maria Silva' })), {
          authorization: `Bearer ${evolutionJwt(JWT_KEY)}`,
        }),
      );
      expect(login.user).to.include({ phone, name: 'Ana' });
    });

    it('refuses an expired token, another key, a token without exp, alg none or HS512, and a bare token', async function () {
      const raw = JSON.stringify(evolutionMessage({ text: 'PIN: 🍎' }));
      const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
      const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ app: 'evolution', exp: Math.floor(Date.now() / 1000) + 600 })}.`;
      const hs512 = jwt.sign({ app: 'evolution' }, JWT_KEY, { algorithm: 'HS512', expiresIn: 600 });
      const tokens = [
        `Bearer ${evolutionJwt(JWT_KEY, { iatOffsetSeconds: -800 })}`, // expired 200 s ago
        `Bearer ${evolutionJwt('not-the-key')}`,
        `Bearer ${evolutionJwt(JWT_KEY, { expiresInSeconds: null })}`,
        `Bearer ${unsigned}`,
        `Bearer ${hs512}`,
        evolutionJwt(JWT_KEY),
        'Bearer ',
      ];
      for (const authorization of tokens) expect401(await postWebhook(stack.url, raw, { authorization }));
    });

    it('either configured method lets a request in (both gateways side by side)', async function () {
      const raw = JSON.stringify(evolutionMessage({ text: 'hello' }));
      const jwtOnly = await postWebhook(stack.url, raw, { authorization: `Bearer ${evolutionJwt(JWT_KEY)}`, 'x-hub-signature-256': sign(raw, 'wrong') });
      expect(jwtOnly.status, jwtOnly.text).to.equal(200);
      const sigOnly = await postWebhook(stack.url, raw, { authorization: `Bearer ${evolutionJwt('wrong')}`, 'x-hub-signature-256': sign(raw, SECRET) });
      expect(sigOnly.status, sigOnly.text).to.equal(200);
    });
  });

  describe('payload shapes', function () {
    const signed = (body: unknown) => {
      const raw = JSON.stringify(body);
      return postWebhook(stack.url, raw, { 'x-hub-signature-256': sign(raw, SECRET) });
    };

    it('Evolution extendedTextMessage from an @lid sender logs in with the phone of remoteJidAlt', async function () {
      const phone = randomPhone();
      const login = await loginThrough((text) =>
        signed(evolutionMessage({ text, extended: true, remoteJid: '214365870912345@lid', remoteJidAlt: `${phone.slice(1)}@s.whatsapp.net` })),
      );
      expect(login.user.phone).to.equal(phone);
    });

    it('an @lid sender with no phone beside it signs in by the LID, with no phone', async function () {
      const login = await loginThrough((text) => signed(evolutionMessage({ text, remoteJid: `${Date.now()}${Math.floor(Math.random() * 1e3)}@lid` })));
      expect(login.user).to.not.have.property('phone');
    });

    it('a repeated delivery of one message is stored once', async function () {
      const before = await jobCounts(inbound);
      const body = evolutionMessage({ text: 'PIN: 🐙🦑', id: 'REDELIVERED-1' });
      for (let i = 0; i < 3; i++) expect((await signed(body)).status).to.equal(200);
      const after = await jobCounts(inbound);
      expect(after.total - before.total).to.equal(1);
    });

    it('answers 200 to everything that is not a text message for us, and stores none of it', async function () {
      const before = await jobCounts(inbound);
      const cloud = (message: Record<string, unknown>) => {
        const body = cloudMessage({ text: 'x' }) as { entry: { changes: { value: { messages: unknown[] } }[] }[] };
        body.entry[0]!.changes[0]!.value.messages = [{ from: '15551234567', id: `wamid.X${Math.random()}`, timestamp: '1', ...message }];
        return body;
      };
      const statuses = cloudMessage({ text: 'x' }) as { entry: { changes: { value: Record<string, unknown> }[] }[] };
      const value = statuses.entry[0]!.changes[0]!.value;
      delete value.messages;
      delete value.contacts;
      value.statuses = [{ id: 'wamid.S', status: 'delivered', timestamp: '1', recipient_id: '15551234567' }];
      const evo = (patch: (b: { data: Record<string, unknown> & { key: Record<string, unknown> } }) => void) => {
        const b = evolutionMessage({ text: 'PIN: 🍎' }) as { data: Record<string, unknown> & { key: Record<string, unknown> } };
        patch(b);
        return b;
      };
      const bodies: unknown[] = [
        statuses,
        cloud({ type: 'reaction', reaction: { message_id: 'wamid.Y', emoji: '👍' } }),
        cloud({ type: 'image', image: { id: '1', mime_type: 'image/jpeg' } }),
        cloud({ type: 'text', text: { body: 'PIN: 🍎' }, group_id: 'G1' }),
        { object: 'instagram', entry: [{ id: '1', changes: [] }] },
        evolutionMessage({ text: 'PIN: 🍎', fromMe: true }),
        evolutionMessage({ text: 'PIN: 🍎', remoteJid: '120363025246125486@g.us' }),
        evolutionMessage({ text: 'PIN: 🍎', remoteJid: 'status@broadcast' }),
        evo((b) => (b.data.message = { reactionMessage: { key: {}, text: '👍' } })),
        evo((b) => (b.data.message = { imageMessage: { caption: 'PIN: 🍎' } })),
        { event: 'connection.update', instance: 'test-instance', data: { state: 'open' } },
        { event: 'messages.update', instance: 'test-instance', data: { status: 'READ' } },
      ];
      for (const body of bodies) {
        const r = await signed(body);
        expect(r.status, JSON.stringify(body)).to.equal(200);
        expect(r.body, JSON.stringify(body)).to.include({ accepted: 0 });
      }
      expect((await jobCounts(inbound)).total).to.equal(before.total);
    });

    it('answers 400 to bodies that can never succeed, and drops bodies past 1 MiB with a 200', async function () {
      const bad = [
        '{"event":',
        '[]',
        '"text"',
        '{}',
        '{"hello":"world"}',
        '{"object":"whatsapp_business_account"}',
        JSON.stringify({ event: 'messages.upsert', instance: 'i', data: { message: {} } }),
      ];
      for (const raw of bad) {
        const r = await postWebhook(stack.url, raw, { 'x-hub-signature-256': sign(raw, SECRET) });
        expect(r.status, raw).to.equal(400);
        expect(r.body, raw).to.include({ success: false, error: 'VALIDATION_ERROR' });
      }
      const text = await request(stack.url, 'POST', '/messaging-endpoint', { raw: 'PIN: 🍎', headers: { 'content-type': 'text/plain' } });
      expect(text.status).to.equal(400);
      const huge = JSON.stringify({ event: 'messages.upsert', pad: 'x'.repeat(1024 * 1024) });
      const big = await postWebhook(stack.url, huge, { 'x-hub-signature-256': sign(huge, SECRET) });
      expect(big.status).to.equal(200);
      expect(big.body).to.include({ accepted: 0, dropped: 'too-large' });
    });

    it('a node with no method configured takes unsigned requests', async function () {
      const r = await postWebhook(open.url, JSON.stringify(evolutionMessage({ text: 'hello there' })));
      expect(r.status, r.text).to.equal(200);
    });
  });

  describe('GET handshake (Cloud API subscription)', function () {
    const handshake = (base: string, token: string, mode = 'subscribe') =>
      request(base, 'GET', `/messaging-endpoint?hub.mode=${mode}&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=1158201444`);

    it('echoes the challenge as text when the token matches', async function () {
      const r = await handshake(stack.url, VERIFY_TOKEN);
      expect(r.status).to.equal(200);
      expect(r.text).to.equal('1158201444');
      expect(r.headers.get('content-type')).to.match(/^text\/plain/);
    });

    it('answers 403 to a wrong token, another mode, and on a node with no token configured', async function () {
      for (const r of [
        await handshake(stack.url, 'wrong'),
        await handshake(stack.url, VERIFY_TOKEN, 'unsubscribe'),
        await request(stack.url, 'GET', '/messaging-endpoint'),
        await handshake(open.url, VERIFY_TOKEN),
        await handshake(open.url, ''),
      ]) {
        expect(r.status).to.equal(403);
        expect(r.body).to.include({ success: false, error: 'FORBIDDEN' });
      }
    });
  });
});

describe('messaging: the webhook when Redis cannot take the job', function () {
  let redis: PrivateRedis | undefined;
  let web: ServiceProcess | undefined;

  before(async function () {
    this.timeout(120000);
    redis = await PrivateRedis.start();
    web = await startProcess('web', { REDIS_URL: redis.url, KEY_PREFIX: 'test-webhook-down' });
  });
  after(async function () {
    this.timeout(30000);
    if (web) await stopProcess(web);
    await redis?.kill();
  });

  it('answers 503 (the gateway retries) while Redis is down, and 200 once it is back', async function () {
    this.timeout(20000);
    const raw = JSON.stringify(evolutionMessage({ text: 'PIN: 🍎' }));
    expect((await postWebhook(web!.url, raw)).status).to.equal(200);
    await redis!.kill();
    const down = await postWebhook(web!.url, raw);
    expect(down.status).to.equal(503);
    expect(down.body).to.include({ success: false, error: 'NETWORK_ERROR' });
    await redis!.start();
    await eventually(async () => ((await postWebhook(web!.url, raw)).status === 200 ? true : undefined), 10000, 200);
  });
});
