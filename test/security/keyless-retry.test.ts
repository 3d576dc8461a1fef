import { expect } from 'chai';
import { scriptRequest } from '../helpers/fault-proxy.js';
import { randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { eventually, post, request, type JsonResponse } from '../helpers/http.js';
import { evolutionChat, PRODUCTION_ENV } from '../helpers/production.js';
import { expectError } from '../core/support.js';
import { startFaultStack, type FaultStack } from '../faults/support.js';

/** A reply held longer than the service's command timeout (2 s): the command ran, the answer is lost. */
const LATE_MS = 3000;

/**
 * register-pin retried after a 503 exactly as the spec's client and the README's curl do (the
 * same body, no Idempotency-Key), production settings (the server draws the emoji string): the
 * first try's registration was written, its answer lost; the retry meets it and the person's
 * message with the string it shows signs in. Someone else naming the PIN still gets a decoy.
 */
describe("security: a keyless register-pin retried after a 503 ends in the person's login", function () {
  this.timeout(60000);
  let f: FaultStack;
  before(async function () {
    this.timeout(60000);
    f = await startFaultStack('sec-keyless-retry', { ...PRODUCTION_ENV, TRUST_PROXY: 'true' });
  });
  after(async function () {
    this.timeout(60000);
    await f?.stop();
  });

  const register = (pin: string, ip: string): Promise<JsonResponse> =>
    request(f.stack.url, 'POST', '/register-pin', { json: { pin }, headers: { 'x-forwarded-for': ip, 'user-agent': 'curl/8.5.0' } });

  it("a write whose answer is lost (503), the identical retry, and the person's message signs in", async function () {
    const pin = randomPin();
    // the registration's write runs in Redis, its reply is held past the command timeout
    const write = new RegExp(`(?:${scriptRequest('register').source})[\\s\\S]*\\r\\nwrite\\r\\n`);
    const held = f.proxy.delayReplyTo(write, LATE_MS);
    const first = await register(pin, '198.51.100.7');
    await held;
    expectError(first, 503, 'NETWORK_ERROR');

    const retry = await register(pin, '198.51.100.7');
    expect(retry.status, retry.text).to.equal(200);
    const emoji = String(retry.body.emojiString);
    // another network naming the same PIN still learns nothing: a decoy with another string
    const other = await register(pin, '203.0.113.9');
    expect(other.status, other.text).to.equal(200);
    expect(other.body.emojiString).to.not.equal(emoji);
    expect(other.body.pinId).to.not.equal(retry.body.pinId);

    const phone = randomPhone();
    expect((await evolutionChat(f.stack.url, `PIN: ${emoji}`, { phone })).status).to.equal(200);
    const login = await eventually(
      async () => {
        const r = await post<LoginBody>(f.stack.url, '/check-login', { pin });
        expect(r.status, r.text).to.equal(200);
        return r.body.verified ? r.body : undefined;
      },
      15000,
      100,
    );
    expect(login.user.phone).to.equal(phone);
  });
});
