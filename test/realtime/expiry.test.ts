import { expect } from 'chai';
import { randomEmoji, randomPin, sendChat } from '../helpers/flow.js';
import { post } from '../helpers/http.js';
import { connected, sleep, type TestClient } from './clients.js';
import { useStack } from './stack.js';

describe('realtime: pin-expired when the delayed expiry job runs (PIN_TTL_SECONDS=2)', function () {
  const stack = useStack({ name: 'rt-expiry', inProcess: true, webs: 2, env: { PIN_TTL_SECONDS: '2' } });
  const clients: TestClient[] = [];
  after(() => {
    for (const c of clients.splice(0)) c.close();
  });

  it('sends pin-expired {pin} to the registering sockets only, and none for a verified PIN', async function () {
    const [a, b, c] = await Promise.all([0, 1, 1].map((n) => connected(stack().webs[n]!.url)));
    clients.push(a!, b!, c!);
    const pin = randomPin();
    const otherPin = randomPin();
    const verifiedPin = randomPin();
    const verifiedEmoji = randomEmoji();
    const emoji = randomEmoji();
    // first the PIN that gets logged in (well within its 2 s), then the ones left to expire
    await a!.socket.timeout(10000).emitWithAck('register-pin', { pin: verifiedPin, emojiString: verifiedEmoji });
    await sendChat(stack().webs[1]!.url, `PIN: ${verifiedEmoji}`);
    await a!.socket.timeout(10000).emitWithAck('register-pin', { pin, emojiString: emoji });
    await b!.socket.timeout(10000).emitWithAck('register-pin', { pin, emojiString: emoji }); // same registration, other node
    await c!.socket.timeout(10000).emitWithAck('register-pin', { pin: otherPin, emojiString: randomEmoji() });
    await a!.next('auth-success');

    expect(await a!.next('pin-expired', 10000)).to.deep.equal({ pin });
    expect(await b!.next('pin-expired', 10000)).to.deep.equal({ pin });
    expect(await c!.next('pin-expired', 10000)).to.deep.equal({ pin: otherPin });
    const check = await post(stack().webs[0]!.url, '/check-login', { pin });
    expect(check.status, check.text).to.equal(410);
    await sleep(500);
    // one each: nothing for the verified PIN, nothing of another client's PIN
    expect(a!.of('pin-expired')).to.deep.equal([{ pin }]);
    expect(b!.of('pin-expired')).to.deep.equal([{ pin }]);
    expect(c!.of('pin-expired')).to.deep.equal([{ pin: otherPin }]);
  });
});
