import { expect } from 'chai';
import { randomEmoji, randomPhone, randomPin, sendChat, type LoginBody } from '../helpers/flow.js';
import { emojiHash } from '../../src/registrations/emoji.js';
import { EMOJI_ALPHABET } from '../../src/registrations/emoji-alphabet.js';
import { queuesIdle } from '../security/client.js';
import { eventually, post } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { keysUnder, register, waitVerified as waitVerifiedAt } from './support.js';

/** Registration rules: idempotency, conflicts, emoji normalisation, the emoji string freed at login. */
describe('core: registrations', function () {
  let stack: InProcessStack;
  before(async function () {
    stack = await startStack({ inProcess: true, name: 'core-reg', webs: 1, workers: 1 });
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

  it('the same emoji string under another PIN: answered like any creation, and the string is contested (no login by it)', async function () {
    const emoji = randomEmoji();
    const first = randomPin();
    expect((await register(stack.url, first, emoji)).status).to.equal(200);
    const second = randomPin();
    const clash = await register(stack.url, second, emoji);
    expect(clash.status, clash.text).to.equal(200);
    expect(clash.body).to.include({ success: true, message: 'PIN registered', expiresIn: 180, emojiString: emoji });
    // neither registration can be signed in by the contested string: no swap, nothing to probe for
    await sendChat(stack.url, `PIN: ${emoji}`, { phone: randomPhone() });
    await queuesIdle(stack.prefix);
    for (const pin of [first, second]) {
      const c = await post(stack.url, '/check-login', { pin });
      expect(c.body, c.text).to.include({ success: true, verified: false });
    }
  });

  it('the same PIN with another emoji string: a decoy shaped like a creation; the registration is untouched', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    const real = await register(stack.url, pin, emoji);
    const other = randomEmoji();
    const decoy = await register(stack.url, pin, other);
    expect(decoy.status, decoy.text).to.equal(200);
    expect(decoy.body).to.include({ success: true, message: 'PIN registered', expiresIn: 180, emojiString: other });
    expect(decoy.body.pinId).to.be.a('string').and.not.equal(real.body.pinId);
    // the decoy's string logs nobody in; the real one still does
    await sendChat(stack.url, `PIN: ${other}`, { phone: randomPhone() });
    await queuesIdle(stack.prefix);
    expect((await post(stack.url, '/check-login', { pin })).body).to.include({ verified: false });
    const again = await register(stack.url, pin, emoji);
    expect(again.body.pinId).to.equal(real.body.pinId);
    await sendChat(stack.url, `PIN: ${emoji}`, { phone: randomPhone() });
    expect((await waitVerified(pin)).verified).to.equal(true);
  });

  it('without an emoji string the server draws one from its alphabet and answers it', async function () {
    const pin = randomPin();
    const reg = await post(stack.url, '/register-pin', { pin });
    expect(reg.status, reg.text).to.equal(200);
    const drawn = String(reg.body.emojiString);
    expect([...drawn]).to.have.length(8);
    for (const e of drawn) expect(EMOJI_ALPHABET).to.include(e);
    // the holder re-joins with the string it was given
    expect((await register(stack.url, pin, drawn)).body).to.include({ pinId: reg.body.pinId, emojiString: drawn });
    await sendChat(stack.url, `PIN: ${drawn}`, { phone: randomPhone() });
    expect((await waitVerified(pin)).verified).to.equal(true);
  });

  it('❤️ and ❤ are one emoji string: they conflict, and either matches the other', async function () {
    const tail = randomEmoji(3);
    const pin = randomPin();
    const first = await register(stack.url, pin, `❤️${tail}`);
    expect(first.status).to.equal(200);
    // same PIN, the other spelling: still the same registration
    const again = await register(stack.url, pin, `❤ ${tail}`);
    expect(again.status, again.text).to.equal(200);
    expect(again.body).to.include({ pinId: first.body.pinId, message: 'PIN already registered' });

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
    // wait for the login without collecting it; then the string is free (not contested): a new
    // registration of it logs in
    await eventually(async () => ((await keysUnder(stack.prefix, `emo:{e${emojiHash(emoji)}}`)).length === 0 ? true : undefined));
    const pin2 = randomPin();
    expect((await register(stack.url, pin2, emoji)).status).to.equal(200);
    await sendChat(stack.url, `PIN: ${emoji}`, { phone: randomPhone() });
    expect((await waitVerified(pin2)).verified).to.equal(true);
    // and the first login is still there to collect
    expect((await waitVerified(pin)).verified).to.equal(true);
  });

  it('a PIN whose login waits to be collected is still held (another emoji string gets a decoy, the holder its login)', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    const real = await register(stack.url, pin, emoji);
    await sendChat(stack.url, emoji, { phone: randomPhone() });
    await eventually(async () => ((await keysUnder(stack.prefix, `emo:{e${emojiHash(emoji)}}`)).length === 0 ? true : undefined));
    const decoy = await register(stack.url, pin, randomEmoji());
    expect(decoy.body).to.include({ success: true, message: 'PIN registered', expiresIn: 180 });
    expect(decoy.body.pinId).to.not.equal(real.body.pinId);
    expect((await waitVerified(pin)).verified).to.equal(true);
    // once collected, the PIN is free again
    const fresh = await register(stack.url, pin, randomEmoji());
    expect(fresh.status).to.equal(200);
    expect((await post(stack.url, '/check-login', { pin })).body).to.include({ verified: false });
  });
});
