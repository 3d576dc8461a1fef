import { expect } from 'chai';
import { scriptRequest } from '../helpers/fault-proxy.js';
import { fullLogin, randomEmoji, randomPin, sendChat, type LoginBody } from '../helpers/flow.js';
import { startMockGateway, type MockGateway } from '../helpers/gateway.js';
import { eventually, get, post, request, type JsonResponse } from '../helpers/http.js';
import { expectError } from '../core/support.js';
import { startFaultStack, type FaultStack } from './support.js';

/** A reply held longer than the service's command timeout (2 s): the command ran, the answer is lost. */
const LATE_MS = 3000;
const REUSE_SECONDS = 5;
const COLLECT_SECONDS = 5;

/**
 * Every client write is safe to retry when its answer is lost: the command ran in Redis, the
 * service timed out waiting and answered 503, the client retries. Driven through the fault
 * proxy, which holds exactly that command's reply.
 */
describe('faults: retries after a lost answer', function () {
  this.timeout(60000);
  let f: FaultStack;
  let gateway: MockGateway;
  before(async function () {
    gateway = await startMockGateway();
    f = await startFaultStack('faults-retry', {
      REFRESH_REUSE_SECONDS: String(REUSE_SECONDS),
      COLLECT_RETRY_SECONDS: String(COLLECT_SECONDS),
      MESSAGING_PROVIDER: 'evolution',
      EVOLUTION_API_URL: gateway.url,
      EVOLUTION_API_KEY: 'test-key',
      EVOLUTION_INSTANCE: 'test',
    });
  });
  after(async function () {
    await f?.stop();
    await gateway?.close();
  });

  /** Sends `send()` while the proxy holds the reply of the request matching `pattern`; expects 503. */
  const withLostAnswer = async (pattern: RegExp, send: () => Promise<JsonResponse>): Promise<JsonResponse> => {
    const held = f.proxy.delayReplyTo(pattern, LATE_MS);
    const first = await send();
    await held;
    expectError(first, 503, 'NETWORK_ERROR');
    expect(first.headers.get('retry-after')).to.match(/^\d+$/);
    return first;
  };

  it('check-login: the retry collects the same tokens, the session is live; after the window the PIN is gone', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    const reg = await post(f.stack.url, '/register-pin', { pin, emojiString: emoji });
    expect(reg.status, reg.text).to.equal(200);
    expect((await sendChat(f.stack.url, `PIN: ${emoji}`)).status).to.equal(200);
    // verified and not collected yet: the worker has logged the login
    await f.stack.workers[0]!.waitForOutput(new RegExp(`login .*${String(reg.body.pinId).replace(/[-]/g, '\\-')}`));
    const check = () => post(f.stack.url, '/check-login', { pin });
    await withLostAnswer(scriptRequest('check'), check);
    const retry = await check();
    expect(retry.status, retry.text).to.equal(200);
    expect(retry.body.verified).to.equal(true);
    const again = await check();
    expect(again.body).to.deep.equal(retry.body);
    expect((await get(f.stack.url, '/profile', String(retry.body.token))).status).to.equal(200);
    await new Promise((r) => setTimeout(r, COLLECT_SECONDS * 1000 + 500));
    expectError(await check(), 404, 'PIN_NOT_FOUND');
    // the same PIN can be registered again at once after a collection
    expect((await post(f.stack.url, '/register-pin', { pin, emojiString: randomEmoji() })).status).to.equal(200);
  });

  it('refresh: the retry gets the same new pair and the session stays open', async function () {
    const { login } = await fullLogin(f.stack.url);
    const refresh = () => post(f.stack.url, '/refresh-token', { refreshToken: login.refreshToken }, login.token);
    await withLostAnswer(scriptRequest('rotate-session'), refresh);
    const retry = await refresh();
    expect(retry.status, retry.text).to.equal(200);
    const again = await refresh();
    expect(again.status, again.text).to.equal(200);
    expect(again.body).to.deep.equal(retry.body);
    expect((await get(f.stack.url, '/profile', String(retry.body.token))).status).to.equal(200);
    // the new refresh token rotates normally
    const next = await post(f.stack.url, '/refresh-token', { refreshToken: retry.body.refreshToken }, String(retry.body.token));
    expect(next.status, next.text).to.equal(200);
  });

  it('refresh: presenting the old token after the leeway is still reuse and closes the session', async function () {
    const { login } = await fullLogin(f.stack.url);
    const first = await post(f.stack.url, '/refresh-token', { refreshToken: login.refreshToken }, login.token);
    expect(first.status, first.text).to.equal(200);
    await new Promise((r) => setTimeout(r, REUSE_SECONDS * 1000 + 500));
    expectError(await post(f.stack.url, '/refresh-token', { refreshToken: login.refreshToken }, login.token), 401, 'AUTHENTICATION_FAILED');
    expectError(await get(f.stack.url, '/profile', String(first.body.token)), 401, 'AUTHENTICATION_FAILED');
  });

  it('send-message with an Idempotency-Key: the retry gets the same messageId, one message is sent', async function () {
    const { login } = await fullLogin(f.stack.url);
    const text = `idempotent-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const send = (key: string, message = text, token = login.token) =>
      request(f.stack.url, 'POST', '/send-message', { json: { phoneNumber: '+5511912345678', message }, token, headers: { 'idempotency-key': key } });
    await withLostAnswer(new RegExp(text), () => send('key-1'));
    const retry = await send('key-1');
    expect(retry.status, retry.text).to.equal(200);
    const third = await send('key-1');
    expect(third.body.messageId).to.equal(retry.body.messageId);
    // same key, another body: refused, nothing queued
    expectError(await send('key-1', `${text}-changed`), 422, 'IDEMPOTENCY_KEY_REUSED');
    expectError(await send('bad key with spaces'), 400, 'VALIDATION_ERROR');

    await eventually(async () => (gateway.requests.some((r) => r.body.includes(text)) ? true : undefined));
    // give a second send every chance to show up
    await new Promise((r) => setTimeout(r, 1500));
    // the text goes out below the heading that says who sent it (docs/security.md)
    const sends = gateway.requests.filter((r) => ((r.json as { text?: string }).text ?? '').includes(text));
    expect(sends, 'messages sent').to.have.length(1);
  });

  it('send-message: Idempotency-Keys are per user', async function () {
    const a = (await fullLogin(f.stack.url)).login;
    const b = (await fullLogin(f.stack.url)).login;
    const send = (who: LoginBody, message: string) =>
      request(f.stack.url, 'POST', '/send-message', {
        json: { phoneNumber: '+5511912345678', message },
        token: who.token,
        headers: { 'idempotency-key': 'shared-key' },
      });
    const ra = await send(a, 'from a');
    const rb = await send(b, 'from b');
    expect(ra.status, ra.text).to.equal(200);
    expect(rb.status, rb.text).to.equal(200);
    expect(ra.body.messageId).to.not.equal(rb.body.messageId);
  });
});
