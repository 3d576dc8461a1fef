import { expect } from 'chai';
import { generateKeyMaterial, privateJwk } from '../../src/key-material.js';
import { randomEmoji, randomPhone, randomPin, sendChat } from '../helpers/flow.js';
import { eventually, post } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';

const KEY_A = 'pin-hash-key-A-0123456789abcdef0123456789';
const KEY_B = 'pin-hash-key-B-0123456789abcdef0123456789';

/**
 * PIN hashes have their own key: a signing-key change keeps every pending registration, and a
 * PIN-key rotation with PIN_HASH_PREVIOUS_KEY keeps them through its grace period.
 */
describe('security: PIN-hash key independent of signing keys, rotatable with a grace period', function () {
  this.timeout(90000);
  let stack: InProcessStack;
  const signing = generateKeyMaterial('ES256');
  const otherSigning = generateKeyMaterial('ES256');
  const keysEnv = (k: typeof signing) => ({ JWT_KEYS: JSON.stringify([privateJwk(k)]) });
  const restartWeb = async (env: Record<string, string>): Promise<void> => {
    const old = stack.webs.shift()!;
    await stack.addWeb(env);
    await old.stop();
  };
  const check = (pin: string) => post(stack.url, '/check-login', { pin });

  before(async function () {
    stack = await startStack({ inProcess: true, name: 'sec-pinhash', env: { CHAT_REPLIES: 'false', PIN_HASH_KEY: KEY_A, ...keysEnv(signing) } });
  });
  after(async function () {
    await stack?.stop();
  });

  it('a registration made before a signing-key change and a PIN-key rotation still logs in; without the previous key it is unknown', async function () {
    const kept = { pin: randomPin(), emoji: randomEmoji() };
    const dropped = { pin: randomPin(), emoji: randomEmoji() };
    for (const r of [kept, dropped]) expect((await post(stack.url, '/register-pin', { pin: r.pin, emojiString: r.emoji })).status).to.equal(200);

    // another signing key: PINs are not keyed by it
    await restartWeb({ ...keysEnv(otherSigning) });
    expect((await check(kept.pin)).body).to.include({ verified: false });

    // rotation: B hashes new PINs, A still finds the old registrations
    await restartWeb({ ...keysEnv(otherSigning), PIN_HASH_KEY: KEY_B, PIN_HASH_PREVIOUS_KEY: KEY_A });
    expect((await check(dropped.pin)).body).to.include({ verified: false });
    const again = await post(stack.url, '/register-pin', { pin: kept.pin, emojiString: kept.emoji });
    expect(again.status, 're-registering during the grace finds the same registration').to.equal(200);
    expect(again.body.message).to.equal('PIN already registered');
    expect((await sendChat(stack.url, `PIN: ${kept.emoji}`, { phone: randomPhone() })).status).to.equal(200);
    const login = await eventually(async () => {
      const r = await check(kept.pin);
      expect(r.status, r.text).to.equal(200);
      return r.body.verified ? r.body : undefined;
    });
    expect(login.token).to.be.a('string');
    // a new registration is made under B and found without A
    const fresh = { pin: randomPin(), emoji: randomEmoji() };
    expect((await post(stack.url, '/register-pin', { pin: fresh.pin, emojiString: fresh.emoji })).status).to.equal(200);

    // grace over: the previous key is removed; old registrations are no longer found, new ones are
    await restartWeb({ ...keysEnv(otherSigning), PIN_HASH_KEY: KEY_B });
    expect((await check(dropped.pin)).status).to.equal(404);
    expect((await check(fresh.pin)).body).to.include({ verified: false });
  });
});
