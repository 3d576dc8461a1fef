import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { fullLogin } from '../helpers/flow.js';
import { request, type JsonResponse } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/processes.js';

/** Headers that differ between any two answers whoever writes them. */
const PER_ANSWER = new Set(['date', 'x-request-id', 'content-length', 'connection', 'keep-alive']);
const headerNames = (r: JsonResponse): string[] => [...r.headers.keys()].filter((h) => !PER_ANSWER.has(h)).sort();

/**
 * The polled endpoints are answered in front of Koa (src/http/fast-api.ts) and by Koa's routes,
 * with one implementation of each (api-core.ts). Koa's router also takes a path with a trailing
 * slash, which the lean handler leaves to it: the same request both ways must get the same
 * status, body and headers.
 */
describe('core: the lean API handler answers as the Koa routes do', function () {
  let stack: Stack;
  before(async function () {
    stack = await startStack({ name: 'lean-api', workers: 1 });
  });
  after(async function () {
    await stack?.stop();
  });

  const both = async (method: string, path: string, opts: { raw?: string; headers?: Record<string, string> } = {}): Promise<[JsonResponse, JsonResponse]> => {
    const headers = { 'content-type': 'application/json', ...(opts.headers ?? {}) };
    const lean = await request(stack.url, method, path, { raw: opts.raw, headers });
    const koa = await request(stack.url, method, `${path}/`, { raw: opts.raw, headers });
    return [lean, koa];
  };

  it('errors: same status, error body and headers (bad JSON, not an object, __proto__, empty, unknown PIN, no token, too large)', async function () {
    const pin = randomBytes(16).toString('base64url');
    const cases: [string, string, string | undefined, number, string][] = [
      ['POST', '/check-login', '{"pin":', 400, 'VALIDATION_ERROR'],
      ['POST', '/check-login', '"a string"', 400, 'VALIDATION_ERROR'],
      ['POST', '/check-login', `{"__proto__":{"x":1},"pin":"${pin}"}`, 400, 'VALIDATION_ERROR'],
      ['POST', '/check-login', '', 400, 'VALIDATION_ERROR'],
      ['POST', '/check-login', JSON.stringify({ pin }), 404, 'PIN_NOT_FOUND'],
      ['POST', '/register-pin', JSON.stringify({ pin: 'a b' }), 400, 'VALIDATION_ERROR'],
      ['POST', '/check-login', JSON.stringify({ pin: 'x'.repeat(17 * 1024) }), 413, 'PAYLOAD_TOO_LARGE'],
      ['GET', '/profile', undefined, 401, 'AUTHENTICATION_FAILED'],
      ['POST', '/refresh-token', JSON.stringify({ refreshToken: 'x' }), 401, 'AUTHENTICATION_FAILED'],
    ];
    for (const [method, path, raw, status, error] of cases) {
      const [lean, koa] = await both(method, path, { raw });
      const label = `${method} ${path} ${raw?.slice(0, 30)}`;
      expect(lean.status, label).to.equal(status);
      expect(lean.body, label).to.include({ success: false, error });
      expect(koa.status, label).to.equal(status);
      expect(lean.body, label).to.deep.equal(koa.body);
      expect(headerNames(lean), label).to.deep.equal(headerNames(koa));
      if (status === 413) expect([lean.headers.get('connection'), koa.headers.get('connection')], label).to.deep.equal(['close', 'close']);
    }
  });

  it('successes: the caller X-Request-Id kept, the same headers; the lean path registers and Koa sees it', async function () {
    const pin = randomBytes(16).toString('base64url');
    const headers = { 'content-type': 'application/json', 'x-request-id': 'app-42' };
    const lean = await request(stack.url, 'POST', '/register-pin', { raw: JSON.stringify({ pin }), headers });
    // re-joining takes the emoji string (without it the answer is a decoy: register.lua)
    const koa = await request(stack.url, 'POST', '/register-pin/', { raw: JSON.stringify({ pin, emojiString: lean.body.emojiString }), headers });
    expect([lean.status, koa.status]).to.deep.equal([200, 200]);
    expect(lean.body).to.include({ success: true, message: 'PIN registered' });
    expect(koa.body).to.include({ success: true, message: 'PIN already registered', pinId: lean.body.pinId });
    expect([lean.headers.get('x-request-id'), koa.headers.get('x-request-id')]).to.deep.equal(['app-42', 'app-42']);
    expect(headerNames(lean)).to.deep.equal(headerNames(koa));
    const [leanCheck, koaCheck] = await both('POST', '/check-login', { raw: JSON.stringify({ pin }) });
    expect(leanCheck.body).to.deep.equal({ success: true, verified: false, message: 'Waiting for the chat message' });
    expect(koaCheck.body).to.deep.equal(leanCheck.body);
  });

  it('a verified login: the same answer both ways (the kept result written as it is), again within the retry window', async function () {
    const { pin, login } = await fullLogin(stack.url);
    expect(login).to.have.all.keys('success', 'verified', 'token', 'refreshToken', 'user');
    expect(login.user).to.have.all.keys('id', 'name', 'phone', 'roles');
    // a lost answer's retry gets the same tokens (COLLECT_RETRY_SECONDS), through either server
    const [lean, koa] = await both('POST', '/check-login', { raw: JSON.stringify({ pin }) });
    expect([lean.status, koa.status]).to.deep.equal([200, 200]);
    expect(lean.body).to.deep.equal(login);
    expect(koa.body).to.deep.equal(login);
    expect([lean.headers.get('content-type'), koa.headers.get('content-type')]).to.deep.equal(['application/json; charset=utf-8', 'application/json; charset=utf-8']);
    expect(headerNames(lean)).to.deep.equal(headerNames(koa));
    // tokens: no cache may keep the answer (RFC 6749 §5.1)
    expect([lean.headers.get('cache-control'), koa.headers.get('cache-control')]).to.deep.equal(['no-store', 'no-store']);
    expect(Number(lean.headers.get('content-length'))).to.equal(Buffer.byteLength(JSON.stringify(login)));
  });

  it('leaves other methods and non-JSON bodies to Koa (405 with Allow, 400 for another Content-Type)', async function () {
    const head = await request(stack.url, 'PUT', '/check-login', { raw: '{}', headers: { 'content-type': 'application/json' } });
    expect(head.status).to.equal(405);
    expect(head.headers.get('allow')).to.match(/POST/);
    const text = await request(stack.url, 'POST', '/check-login', { raw: 'pin=1', headers: { 'content-type': 'text/plain' } });
    expect(text.status).to.equal(400);
    expect(text.body).to.include({ success: false, error: 'VALIDATION_ERROR', message: 'Content-Type must be application/json' });
  });
});
