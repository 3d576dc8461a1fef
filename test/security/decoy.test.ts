import { expect } from 'chai';
import { keys } from '../../src/redis/keys.js';
import { activePinsAt } from '../helpers/http.js';
import { randomPhone, randomPin } from '../helpers/flow.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { postChat, registerPin } from '../ops/support.js';
import { connected, type TestClient } from '../realtime/clients.js';
import { freshIp } from './client.js';

/**
 * Naming someone else's live PIN, in production settings (two web nodes, a worker): the decoy's
 * socket gets none of the registration's events, not even those that land while its
 * `register-pin` is in flight, and `/health`'s activePins moves exactly as for a free PIN.
 */
const SECRET = 'decoy-suite-webhook-secret-of-32-bytes!!';

describe('security: a decoy register-pin learns nothing and receives nothing', function () {
  this.timeout(60000);
  let stack: Stack;
  const sockets: TestClient[] = [];
  const redis = testRedis();

  before(async function () {
    this.timeout(60000);
    stack = await startStack({
      name: 'sec-decoy',
      webs: 2,
      workers: 1,
      env: {
        NODE_ENV: 'production',
        JWT_SECRET: 'decoy-suite-jwt-secret-0123456789abcdefgh',
        WEBHOOK_SECRET: SECRET,
        TRUST_PROXY: 'true',
        // one figure a minute: the test ends a window itself by deleting the figure
        ACTIVE_PINS_REFRESH_SECONDS: '60',
      },
    });
  });
  after(async function () {
    for (const s of sockets.splice(0)) s.close();
    redis.disconnect();
    await stack?.stop();
  });

  const socketOn = async (url: string): Promise<TestClient> => {
    const c = await connected(url, { extraHeaders: { 'x-forwarded-for': freshIp() } });
    sockets.push(c);
    return c;
  };
  const ack = (c: TestClient, payload: object): Promise<Record<string, unknown>> => new Promise((resolve) => c.socket.emit('register-pin', payload, resolve));

  it('a decoy in flight while the real login lands (its node paused in between) never gets auth-success', async function () {
    const [a, b] = stack.webs as [(typeof stack.webs)[0], (typeof stack.webs)[0]];
    const victim = await registerPin(b.url);
    const follower = await socketOn(b.url);
    expect(await ack(follower, { pin: victim.pin, emojiString: victim.emoji })).to.include({ success: true, pinId: victim.pinId });
    const attacker = await socketOn(a.url);
    // node A stops: the decoy's register-pin and the login's event both wait in its buffers,
    // the decoy's first, as if the login landed while the decoy's answer was on its way
    a.child.kill('SIGSTOP');
    let decoy: Promise<Record<string, unknown>>;
    try {
      decoy = ack(attacker, { pin: victim.pin });
      const phone = randomPhone();
      expect((await postChat(b.url, `PIN: ${victim.emoji}`, { phone, secret: SECRET })).status).to.equal(200);
      expect((await follower.next<{ user: { phone: string } }>('auth-success')).user.phone).to.equal(phone);
    } finally {
      a.child.kill('SIGCONT');
    }
    // answered like a creation (another pinId)...
    const answer = await decoy;
    expect(answer).to.include({ success: true });
    expect(answer.pinId).to.not.equal(victim.pinId);
    // ...and nothing else: a later answer on the same connection comes after anything sent before it
    expect(await ack(attacker, { pin: randomPin() })).to.include({ success: true });
    expect(attacker.received.map((r) => r.event)).to.deep.equal(['pin-registered', 'pin-registered']);
  });

  it('activePins: naming a live PIN moves it exactly as registering a free one, and one registration does not move it at once', async function () {
    const [a, b] = stack.webs as [(typeof stack.webs)[0], (typeof stack.webs)[0]];
    const figureKey = keys(stack.prefix).activePinsFigure();
    const figure = (url: string): Promise<number> => activePinsAt(url);
    /** the figure of a new window (the test ends the current one) */
    const counted = async (): Promise<number> => {
      await redis.del(figureKey);
      return figure(a.url);
    };
    const live = await registerPin(b.url);
    const before = await counted();
    expect(await figure(b.url), 'one figure for every node').to.equal(before);

    const decoy = await ack(await socketOn(a.url), { pin: live.pin });
    expect(decoy).to.include({ success: true });
    expect(await figure(a.url), 'within a window the figure stands').to.equal(before);
    expect(await figure(b.url)).to.equal(before);
    const afterDecoy = await counted();

    await registerPin(b.url);
    const afterFree = await counted();
    expect([afterDecoy - before, afterFree - afterDecoy]).to.deep.equal([1, 1]);
  });
});
