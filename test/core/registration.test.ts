import { expect } from 'chai';
import { randomEmoji, randomPhone, randomPin, sendChat, type LoginBody } from '../helpers/flow.js';
import { eventually } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { expectError, register, waitVerified as waitVerifiedAt } from './support.js';

/** Registration rules: idempotency, conflicts, emoji normalisation, the emoji string freed at login. */
describe('core: registrations', function () {
  let stack: Stack;
  before(async function () {
    stack = await startStack({ name: 'core-reg', webs: 1, workers: 1 });
  });
  after(async function () {
    await stack?.stop();
  });

  const waitVerified = (pin: string): Promise<LoginBody> => waitVerifiedAt(stack.url, pin);

  it('re-registering the same PIN and emoji string is idempotent (same pinId)', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    const first = await register(stack.url, pin, emoji);
    const second = await register(stack.url, pin, emoji);
    expect(second.status, second.text).to.equal(200);
    expect(second.body.success).to.equal(true);
    expect(second.body.pinId).to.equal(first.body.pinId);
    expect(second.body.expiresIn).to.be.within(1, 180);
  });

  it('the same emoji string under another PIN is 409 PIN_CONFLICT', async function () {
    const emoji = randomEmoji();
    expect((await register(stack.url, randomPin(), emoji)).status).to.equal(200);
    expectError(await register(stack.url, randomPin(), emoji), 409, 'PIN_CONFLICT');
  });

  it('the same PIN with another emoji string is 409 PIN_CONFLICT', async function () {
    const pin = randomPin();
    expect((await register(stack.url, pin, randomEmoji())).status).to.equal(200);
    expectError(await register(stack.url, pin, randomEmoji()), 409, 'PIN_CONFLICT');
  });

  it('❤️ and ❤ are one emoji string: they conflict, and either matches the other', async function () {
    const tail = randomEmoji(3);
    const pin = randomPin();
    expect((await register(stack.url, pin, `❤️${tail}`)).status).to.equal(200);
    expectError(await register(stack.url, randomPin(), `❤${tail}`), 409, 'PIN_CONFLICT');
    // same PIN, the other spelling: still the same registration
    const again = await register(stack.url, pin, `❤ ${tail}`);
    expect(again.status, again.text).to.equal(200);

    await sendChat(stack.url, `PIN: ❤${tail}`, { phone: randomPhone() });
    expect((await waitVerified(pin)).verified).to.equal(true);

    const pin2 = randomPin();
    expect((await register(stack.url, pin2, `❤${tail}🐢`)).status).to.equal(200);
    await sendChat(stack.url, `PIN: ❤️${tail}🐢`, { phone: randomPhone() });
    expect((await waitVerified(pin2)).verified).to.equal(true);
  });

  it('the emoji string is free for a new registration from the moment of the login', async function () {
    const emoji = randomEmoji();
    const pin = randomPin();
    await register(stack.url, pin, emoji);
    await sendChat(stack.url, `PIN: ${emoji}`, { phone: randomPhone() });
    // wait for the login without collecting it: the registration's PIN still answers 409 for other emoji
    await eventually(async () => {
      const r = await register(stack.url, randomPin(), emoji);
      return r.status === 200 ? r : undefined;
    });
    // and the first login is still there to collect
    expect((await waitVerified(pin)).verified).to.equal(true);
  });

  it('a PIN whose login waits to be collected is still held (409 for another emoji string)', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    await register(stack.url, pin, emoji);
    await sendChat(stack.url, emoji, { phone: randomPhone() });
    await eventually(async () => ((await register(stack.url, randomPin(), emoji)).status === 200 ? true : undefined));
    expectError(await register(stack.url, pin, randomEmoji()), 409, 'PIN_CONFLICT');
    expect((await waitVerified(pin)).verified).to.equal(true);
    // once collected, the PIN is free again
    expect((await register(stack.url, pin, randomEmoji())).status).to.equal(200);
  });
});
