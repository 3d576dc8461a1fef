import { expect } from 'chai';
import { randomEmoji, randomPin } from '../helpers/flow.js';
import { evolutionMessage } from '../helpers/gateway.js';
import { request } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { expectError } from './support.js';

/** Every input gets a defined answer: VALIDATION_ERROR for bad bodies, 413 for big ones, never a 500. */
describe('core: request validation', function () {
  let stack: InProcessStack;
  before(async function () {
    stack = await startStack({ inProcess: true, name: 'core-val', webs: 1, workers: 0 });
  });
  after(async function () {
    await stack?.stop();
  });

  const send = (path: string, json: unknown) => request(stack.url, 'POST', path, { json });
  const sendRaw = (path: string, raw: string | Buffer, type?: string) =>
    request(stack.url, 'POST', path, { raw, headers: type === undefined ? {} : { 'content-type': type } });
  const emoji = randomEmoji();

  const registerCases: [string, unknown, string][] = [
    ['missing pin', { emojiString: emoji }, 'pin'],
    ['null emojiString', { pin: randomPin(), emojiString: null }, 'emojiString'],
    ['number pin', { pin: 12345678, emojiString: emoji }, 'pin'],
    ['null pin', { pin: null, emojiString: emoji }, 'pin'],
    ['array emojiString', { pin: randomPin(), emojiString: ['🍎'] }, 'emojiString'],
    ['object emojiString', { pin: randomPin(), emojiString: { e: '🍎' } }, 'emojiString'],
    ['pin too short', { pin: 'abc', emojiString: emoji }, 'pin'],
    ['pin too long', { pin: 'x'.repeat(129), emojiString: emoji }, 'pin'],
    ['pin with a space', { pin: 'ab cd ef', emojiString: emoji }, 'pin'],
    ['pin with a tab', { pin: 'abcd\tef', emojiString: emoji }, 'pin'],
    ['pin not ASCII', { pin: 'pïn-1234', emojiString: emoji }, 'pin'],
    ['empty emojiString', { pin: randomPin(), emojiString: '' }, 'emojiString'],
    ['blank emojiString', { pin: randomPin(), emojiString: '   ' }, 'emojiString'],
    ['letters', { pin: randomPin(), emojiString: 'abc' }, 'emojiString'],
    ['digits', { pin: randomPin(), emojiString: '123' }, 'emojiString'],
    ['emoji and a letter', { pin: randomPin(), emojiString: '🍎a' }, 'emojiString'],
    ['17 emoji', { pin: randomPin(), emojiString: '🍎'.repeat(17) }, 'emojiString'],
    ['a lone variation selector', { pin: randomPin(), emojiString: '\uFE0F' }, 'emojiString'],
    ['a lone surrogate', { pin: randomPin(), emojiString: '\uD83C' }, 'emojiString'],
  ];
  it('/register-pin: emojiString may be omitted: the server draws one and answers it', async function () {
    const r = await send('/register-pin', { pin: randomPin() });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.emojiString).to.be.a('string').and.not.equal('');
  });
  for (const [name, body, field] of registerCases) {
    it(`/register-pin: ${name} is 400 VALIDATION_ERROR naming ${field}`, async function () {
      const r = await send('/register-pin', body);
      expectError(r, 400, 'VALIDATION_ERROR');
      expect(r.body.details, r.text).to.be.an('array');
      expect((r.body.details as { field: string }[]).map((d) => d.field)).to.include(field);
    });
  }

  it('/register-pin accepts 16 emoji of every kind (flags, ZWJ, keycaps, skin tones, text style)', async function () {
    const r = await send('/register-pin', { pin: randomPin(), emojiString: '🇧🇷👨‍👩‍👧1️⃣👍🏽❤🍎🍎🍎🍎🍎🍎🍎🍎🍎🍎🍎' });
    expect(r.status, r.text).to.equal(200);
  });

  const bodyless = ['/register-pin', '/check-login'];
  for (const path of bodyless) {
    it(`${path}: malformed JSON, non-object JSON and an empty body are 400 VALIDATION_ERROR`, async function () {
      for (const raw of ['{"pin": "abcd"', '{pin: "abcd"}', '"abcd"', 'null', '42', '[]', '[{"pin":"abcdef"}]', '']) {
        expectError(await sendRaw(path, raw, 'application/json'), 400, 'VALIDATION_ERROR');
      }
    });

    it(`${path}: a body that is not JSON is 400 VALIDATION_ERROR`, async function () {
      const body = JSON.stringify({ pin: randomPin(), emojiString: emoji });
      expectError(await sendRaw(path, body, 'text/plain'), 400, 'VALIDATION_ERROR');
      expectError(await sendRaw(path, `pin=${randomPin()}`, 'application/x-www-form-urlencoded'), 400, 'VALIDATION_ERROR');
      expectError(await sendRaw(path, body), 400, 'VALIDATION_ERROR');
      expectError(
        await request(stack.url, 'POST', path, { raw: body, headers: { 'content-type': 'application/json', 'content-encoding': 'x-unknown' } }),
        400,
        'VALIDATION_ERROR',
      );
    });

    it(`${path}: a body over 16 KiB is 413 PAYLOAD_TOO_LARGE`, async function () {
      const r = await send(path, { pin: randomPin(), emojiString: emoji, padding: 'x'.repeat(17 * 1024) });
      expectError(r, 413, 'PAYLOAD_TOO_LARGE');
    });
  }

  it('/check-login: missing, wrong-typed or out-of-rule pin is 400 VALIDATION_ERROR', async function () {
    for (const body of [{}, { pin: 1234 }, { pin: ['abcd'] }, { pin: 'abc' }, { pin: 'a b c d' }, { pin: 'y'.repeat(129) }]) {
      expectError(await send('/check-login', body), 400, 'VALIDATION_ERROR');
    }
  });

  it('/messaging-endpoint takes bodies up to 1 MiB (media messages), drops larger ones with a 200 (never retried)', async function () {
    const event = (padding: number) => ({ ...evolutionMessage({ text: `PIN: ${emoji}` }), padding: 'x'.repeat(padding) });
    const big = await send('/messaging-endpoint', event(100 * 1024));
    expect(big.status, big.text).to.equal(200);
    const dropped = await send('/messaging-endpoint', event(1024 * 1024));
    expect(dropped.status, dropped.text).to.equal(200);
    expect(dropped.body).to.deep.equal({ received: true, accepted: 0, ignored: 0, dropped: 'too-large' });
    expectError(await sendRaw('/messaging-endpoint', '{"event":', 'application/json'), 400, 'VALIDATION_ERROR');
    expectError(await sendRaw('/messaging-endpoint', JSON.stringify(event(0)), 'text/plain'), 400, 'VALIDATION_ERROR');
  });

  it('/refresh-token and /logout check the token before the body', async function () {
    expectError(await sendRaw('/refresh-token', '{bad', 'application/json'), 401, 'AUTHENTICATION_FAILED');
    expectError(await sendRaw('/logout', '{bad', 'application/json'), 401, 'AUTHENTICATION_FAILED');
  });

  it('an unknown path is 404 NOT_FOUND and a wrong method 405, in the error body shape', async function () {
    expectError(await request(stack.url, 'GET', '/no-such-thing'), 404, 'NOT_FOUND');
    const r = await request(stack.url, 'GET', '/register-pin');
    expectError(r, 405, 'METHOD_NOT_ALLOWED');
    expect(r.headers.get('allow')).to.include('POST');
    // a method the router has never heard of is a client's doing too: not a 500
    const odd = await request(stack.url, 'PROPFIND', '/register-pin');
    expectError(odd, 405, 'METHOD_NOT_ALLOWED');
  });
});
