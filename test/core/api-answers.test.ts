import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { fullLogin } from '../helpers/flow.js';
import { request, type JsonResponse } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';

/** Headers that differ between any two answers whoever writes them. */
const PER_ANSWER = new Set(['date', 'x-request-id', 'content-length', 'connection', 'keep-alive']);
const headerNames = (r: JsonResponse): string[] => [...r.headers.keys()].filter((h) => !PER_ANSWER.has(h)).sort();

/**
 * The polled endpoints' answers as clients read them: the error model's status and body, the
 * API's headers, the caller's X-Request-Id, the kept result of a verified login. Koa's router
 * takes a path with one trailing slash as the path itself: every request is sent both ways and
 * must get the same status, body and headers.
 */
describe('core: the polled endpoints answer as documented, with or without a trailing slash', function () {
  let stack: InProcessStack;
  before(async function () {
    stack = await startStack({ inProcess: true, name: 'api-answers', workers: 1 });
  });
  after(async function () {
    await stack?.stop();
  });

  const both = async (method: string, path: string, opts: { raw?: string; headers?: Record<string, string> } = {}): Promise<[JsonResponse, JsonResponse]> => {
    const headers = { 'content-type': 'application/json', ...(opts.headers ?? {}) };
    const plain = await request(stack.url, method, path, { raw: opts.raw, headers });
    const slashed = await request(stack.url, method, `${path}/`, { raw: opts.raw, headers });
    return [plain, slashed];
  };

  it('errors: same status, error body and headers (bad JSON, not an object, __proto__, empty, unknown PIN, no token, too large)', async function () {
    const pin = randomBytes(16).toString('base64url');
    // not JSON, not an object or array, or a prototype key: the parser's one message
    const malformed = 'Malformed request body';
    const cases: [string, string, string | undefined, number, string, string?][] = [
      ['POST', '/check-login', '{"pin":', 400, 'VALIDATION_ERROR', malformed],
      ['POST', '/check-login', '"a string"', 400, 'VALIDATION_ERROR', malformed],
      ['POST', '/check-login', '42', 400, 'VALIDATION_ERROR', malformed],
      ['POST', '/check-login', `{"__proto__":{"x":1},"pin":"${pin}"}`, 400, 'VALIDATION_ERROR', malformed],
      ['POST', '/check-login', '', 400, 'VALIDATION_ERROR'],
      ['POST', '/check-login', JSON.stringify({ pin }), 404, 'PIN_NOT_FOUND'],
      ['POST', '/register-pin', JSON.stringify({ pin: 'a b' }), 400, 'VALIDATION_ERROR'],
      ['POST', '/check-login', JSON.stringify({ pin: 'x'.repeat(17 * 1024) }), 413, 'PAYLOAD_TOO_LARGE'],
      ['GET', '/profile', undefined, 401, 'AUTHENTICATION_FAILED', 'Missing bearer token'],
      ['POST', '/refresh-token', JSON.stringify({ refreshToken: 'x' }), 401, 'AUTHENTICATION_FAILED', 'Missing bearer token'],
    ];
    for (const [method, path, raw, status, error, message] of cases) {
      const [plain, slashed] = await both(method, path, { raw });
      const label = `${method} ${path} ${raw?.slice(0, 30)}`;
      expect(plain.status, label).to.equal(status);
      expect(plain.body, label).to.include({ success: false, error });
      if (message !== undefined) expect(plain.body.message, label).to.equal(message);
      expect(slashed.status, label).to.equal(status);
      expect(plain.body, label).to.deep.equal(slashed.body);
      expect(headerNames(plain), label).to.deep.equal(headerNames(slashed));
      if (status === 413) expect([plain.headers.get('connection'), slashed.headers.get('connection')], label).to.deep.equal(['close', 'close']);
    }
  });

  it('successes: the caller X-Request-Id kept, the same headers; a registration and its re-join', async function () {
    const pin = randomBytes(16).toString('base64url');
    const headers = { 'content-type': 'application/json', 'x-request-id': 'app-42' };
    const plain = await request(stack.url, 'POST', '/register-pin', { raw: JSON.stringify({ pin }), headers });
    // re-joining takes the emoji string (without it the answer is a decoy: register.lua)
    const slashed = await request(stack.url, 'POST', '/register-pin/', { raw: JSON.stringify({ pin, emojiString: plain.body.emojiString }), headers });
    expect([plain.status, slashed.status]).to.deep.equal([200, 200]);
    expect(plain.body).to.include({ success: true, message: 'PIN registered' });
    expect(slashed.body).to.include({ success: true, message: 'PIN already registered', pinId: plain.body.pinId });
    expect([plain.headers.get('x-request-id'), slashed.headers.get('x-request-id')]).to.deep.equal(['app-42', 'app-42']);
    expect(headerNames(plain)).to.deep.equal(headerNames(slashed));
    const [plainCheck, slashedCheck] = await both('POST', '/check-login', { raw: JSON.stringify({ pin }) });
    expect(plainCheck.body).to.deep.equal({ success: true, verified: false, message: 'Waiting for the chat message' });
    expect(slashedCheck.body).to.deep.equal(plainCheck.body);
  });

  it('a verified login: the kept result, again within the retry window, not cached', async function () {
    const { pin, login } = await fullLogin(stack.url);
    expect(login).to.have.all.keys('success', 'verified', 'token', 'refreshToken', 'user');
    expect(login.user).to.have.all.keys('id', 'name', 'phone', 'roles');
    // a lost answer's retry gets the same tokens (COLLECT_RETRY_SECONDS), with or without the slash
    const [plain, slashed] = await both('POST', '/check-login', { raw: JSON.stringify({ pin }) });
    expect([plain.status, slashed.status]).to.deep.equal([200, 200]);
    expect(plain.body).to.deep.equal(login);
    expect(slashed.body).to.deep.equal(login);
    expect([plain.headers.get('content-type'), slashed.headers.get('content-type')]).to.deep.equal([
      'application/json; charset=utf-8',
      'application/json; charset=utf-8',
    ]);
    expect(headerNames(plain)).to.deep.equal(headerNames(slashed));
    // tokens: no cache may keep the answer (RFC 6749 §5.1)
    expect([plain.headers.get('cache-control'), slashed.headers.get('cache-control')]).to.deep.equal(['no-store', 'no-store']);
    expect(Number(plain.headers.get('content-length'))).to.equal(Buffer.byteLength(JSON.stringify(login)));
  });

  it('another method is 405 with Allow, another Content-Type 400', async function () {
    const head = await request(stack.url, 'PUT', '/check-login', { raw: '{}', headers: { 'content-type': 'application/json' } });
    expect(head.status).to.equal(405);
    expect(head.headers.get('allow')).to.match(/POST/);
    const text = await request(stack.url, 'POST', '/check-login', { raw: 'pin=1', headers: { 'content-type': 'text/plain' } });
    expect(text.status).to.equal(400);
    expect(text.body).to.include({ success: false, error: 'VALIDATION_ERROR', message: 'Content-Type must be application/json' });
  });
});
