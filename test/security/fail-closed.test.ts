import { expect } from 'chai';
import { post } from '../helpers/http.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { newRegistration } from './client.js';
import { expectError } from './expect-error.js';

describe('security: the limits fail closed when Redis is gone', function () {
  let stack: Stack;
  let redis: PrivateRedis;

  before(async function () {
    redis = await PrivateRedis.start();
    stack = await startStack({ name: 'sec-closed', workers: 0, env: { REDIS_URL: redis.url } });
  });
  after(async function () {
    await stack?.stop();
    await redis?.kill();
  });

  it('limited requests answer 503 NETWORK_ERROR instead of passing unchecked, and the process stays up', async function () {
    const reg = newRegistration();
    expect((await post(stack.url, '/register-pin', reg)).status).to.equal(200);
    await redis.kill();
    expectError(await post(stack.url, '/check-login', { pin: reg.pin }), 'NETWORK_ERROR');
    expectError(await post(stack.url, '/register-pin', newRegistration()), 'NETWORK_ERROR');
    expect(stack.webs[0]!.child.exitCode).to.equal(null);
  });
});
