import { expect } from 'chai';
import { emojiHash } from '../../src/registrations/emoji.js';
import { fullLogin, randomEmoji, randomPhone, randomPin, sendChat } from '../helpers/flow.js';
import { activePinsAt, eventually, get, post } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { expectError, keysUnder, register, waitVerified as waitVerifiedAt } from './support.js';

/** the collect retry window of this suite (short: the single-use check waits it out) */
const COLLECT_SECONDS = 1;

/** The whole PIN login as a client app lives it, against web and worker started from the Procfile. */
describe('core: the PIN login flow', function () {
  let stack: Stack;
  before(async function () {
    stack = await startStack({
      name: 'core-flow',
      webs: 1,
      workers: 1,
      env: { LOG_LEVEL: 'debug', COLLECT_RETRY_SECONDS: String(COLLECT_SECONDS), ACTIVE_PINS_REFRESH_SECONDS: '0' },
    });
  });
  after(async function () {
    await stack?.stop();
  });

  it('register → pending → chat message → verified with tokens, once; then the profile', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    const phone = randomPhone();

    const reg = await register(stack.url, pin, emoji);
    expect(reg.status, reg.text).to.equal(200);
    expect(reg.body).to.include({ success: true, expiresIn: 180 });
    expect(reg.body.message).to.be.a('string');
    expect(reg.body.pinId).to.be.a('string').with.length.greaterThan(0);

    const pending = await post(stack.url, '/check-login', { pin });
    expect(pending.status, pending.text).to.equal(200);
    expect(pending.body).to.include({ success: true, verified: false });
    expect(pending.body.message).to.be.a('string');
    // the documented pending shape: the confirmation's field appears only when it is on
    expect(pending.body).to.not.have.property('awaitingConfirmation');

    expect(await activePinsAt(stack.url)).to.equal(1);

    const hook = await sendChat(stack.url, `PIN: ${emoji}`, { phone, pushName: 'Ada Lovelace' });
    expect(hook.status, hook.text).to.equal(200);

    const login = await waitVerifiedAt(stack.url, pin);
    expect(login.success).to.equal(true);
    expect(login.token)
      .to.be.a('string')
      .and.match(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(login.refreshToken).to.be.a('string').and.not.equal(login.token);
    expect(login.user).to.have.all.keys('id', 'name', 'phone', 'roles');
    expect(login.user).to.deep.include({ name: 'Ada', phone, roles: ['user'] });

    // single use: a retry within the collect window gets the very same login, then it is gone
    const retry = await post(stack.url, '/check-login', { pin });
    expect(retry.body).to.deep.equal(login);
    await new Promise((r) => setTimeout(r, COLLECT_SECONDS * 1000 + 300));
    expectError(await post(stack.url, '/check-login', { pin }), 404, 'PIN_NOT_FOUND');
    // a login leaves the active count
    expect(await activePinsAt(stack.url)).to.equal(0);

    const profile = await get(stack.url, '/profile', login.token);
    expect(profile.status, profile.text).to.equal(200);
    expect(profile.body.success).to.equal(true);
    expect(profile.body.user).to.deep.equal({ id: login.user.id, name: 'Ada', surname: 'Lovelace', phone, roles: ['user'] });

    // no log line of any process, at debug level, holds the PIN, the message text or a token
    const logs = [...stack.webs, ...stack.workers].map((p) => p.output()).join('\n');
    expect(logs).to.include(String(reg.body.pinId));
    for (const secret of [pin, emoji, login.token, login.refreshToken, login.token.split('.')[2]!]) {
      expect(logs.includes(secret), `a log line holds ${secret.slice(0, 12)}…`).to.equal(false);
    }
  });

  it('several simultaneous checks of a verified result all get the same one login (one session)', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    await register(stack.url, pin, emoji);
    await sendChat(stack.url, `PIN: ${emoji}`, { phone: randomPhone() });
    // wait until the login is stored (state 'v', its result kept), without collecting it: the
    // claim frees the emoji string a moment before the worker stores the tokens, and a check in
    // between answers pending
    const redis = testRedis();
    try {
      await eventually(async () => {
        for (const key of await keysUnder(stack.prefix, 'reg:*')) {
          const [e, state] = await redis.hmget(key, 'emojiHash', 'state');
          if (e === emojiHash(emoji) && state === 'verified') return true;
        }
        return undefined;
      });
    } finally {
      redis.disconnect();
    }
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => post(stack.url, '/check-login', { pin })));
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.text)).size, 'distinct answers').to.equal(1);
    expect(answers[0]!.body.verified).to.equal(true);
  });

  it("keeps no PIN in clear anywhere in Redis (keys, values, job data), nor a registration's emoji string", async function () {
    const pending = randomPin();
    const emoji = randomEmoji();
    await register(stack.url, pending, emoji);
    // the chat text of a login is in its inbound job (the worker needs it): not a secret, the PIN is
    const { pin: loggedIn } = await fullLogin(stack.url);
    const redis = testRedis();
    try {
      let dump = '';
      for (const key of await keysUnder(stack.prefix, '*')) {
        const type = await redis.type(key);
        const value =
          type === 'string'
            ? await redis.get(key)
            : type === 'hash'
              ? JSON.stringify(await redis.hgetall(key))
              : type === 'list'
                ? JSON.stringify(await redis.lrange(key, 0, -1))
                : type === 'zset'
                  ? JSON.stringify(await redis.zrange(key, '0', '-1'))
                  : type === 'set'
                    ? JSON.stringify(await redis.smembers(key))
                    : '';
        dump += `${key}\n${value}\n`;
      }
      expect(dump).to.include(stack.prefix);
      for (const secret of [pending, loggedIn, emoji]) {
        expect(dump.includes(secret), `Redis holds ${secret}`).to.equal(false);
      }
    } finally {
      redis.disconnect();
    }
  });

  it('answers /health with the documented shape', async function () {
    const health = await get(stack.url, '/health');
    expect(health.status).to.equal(200);
    expect(health.body).to.have.all.keys('status', 'timestamp', 'activePins', 'instance');
    expect(health.body.status).to.equal('ok');
    expect(health.body.timestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(health.body.activePins).to.be.a('number');
    expect(health.body.instance).to.equal(`web-${stack.webs[0]!.port}`);
  });

  it('an unknown PIN is 404 PIN_NOT_FOUND', async function () {
    expectError(await post(stack.url, '/check-login', { pin: randomPin() }), 404, 'PIN_NOT_FOUND');
  });
});
