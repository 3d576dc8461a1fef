import { expect } from 'chai';
import { fullLogin, randomEmoji, randomPin, sendChat, type LoginBody } from '../helpers/flow.js';
import { eventually, get, post, request } from '../helpers/http.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { expectError } from './support.js';

/**
 * Redis going away must turn requests into a quick 503 NETWORK_ERROR, not a hang, and the
 * service must come back by itself. Uses a private redis-server (never the shared one).
 */
describe('core: Redis outage', function () {
  let redis: PrivateRedis;
  let stack: Stack;
  let login: LoginBody;
  before(async function () {
    redis = await PrivateRedis.start();
    stack = await startStack({ name: 'core-outage', webs: 1, workers: 1, env: { REDIS_URL: redis.url, CHAT_REPLIES: 'false' } });
    login = (await fullLogin(stack.url)).login;
  });
  after(async function () {
    await stack?.stop().catch(() => undefined);
    await redis?.kill();
  });

  it('answers 503 NETWORK_ERROR while Redis is down, then recovers when it is back', async function () {
    this.timeout(60000);
    await redis.kill();

    const health = await get(stack.url, '/health');
    expect(health.status, health.text).to.equal(503);
    expect(health.body).to.include({ status: 'unavailable', activePins: null });
    expect(health.body.timestamp).to.be.a('string');
    expect(health.body.instance).to.be.a('string');

    expectError(await post(stack.url, '/register-pin', { pin: randomPin(), emojiString: randomEmoji() }), 503, 'NETWORK_ERROR');
    expectError(await post(stack.url, '/check-login', { pin: randomPin() }), 503, 'NETWORK_ERROR');
    expectError(await sendChat(stack.url, `PIN: ${randomEmoji()}`), 503, 'NETWORK_ERROR');
    expectError(await get(stack.url, '/profile', login.token), 503, 'NETWORK_ERROR');
    expectError(await post(stack.url, '/send-message', { phoneNumber: '+5511912345678', message: 'hi' }, login.token), 503, 'NETWORK_ERROR');
    expectError(await request(stack.url, 'POST', '/logout', { json: { id: login.user.id }, token: login.token }), 503, 'NETWORK_ERROR');

    await redis.start();
    await eventually(async () => ((await get(stack.url, '/health')).status === 200 ? true : undefined), 15000);
    // the private Redis kept nothing: a new login goes through web, queue and worker again
    const again = await fullLogin(stack.url);
    expect(again.login.verified).to.equal(true);

    // the outage was reported through the logger, not as raw stack traces on stderr
    for (const p of [...stack.webs, ...stack.workers]) {
      const raw = p
        .output()
        .split('\n')
        .filter((l) => /^(\w*Error\b|\s+at )/.test(l));
      expect(raw, `${p.role} printed:\n${raw.slice(0, 5).join('\n')}`).to.deep.equal([]);
    }
  });
});
