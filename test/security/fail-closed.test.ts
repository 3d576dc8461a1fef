import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { post } from '../helpers/http.js';
import { freePort, startStack, type Stack } from '../helpers/processes.js';
import { newRegistration } from './client.js';
import { expectError } from './expect-error.js';

/** A private Redis of this suite's own, so it can be taken away without touching the shared one. */
async function privateRedis(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (/Ready to accept connections/.test(out)) resolve();
    });
    child.once('exit', () => reject(new Error(`redis-server exited: ${out.slice(-500)}`)));
  });
  return { url: `redis://127.0.0.1:${port}`, child };
}

describe('security: the limits fail closed when Redis is gone', function () {
  let stack: Stack;
  let redis: { url: string; child: ChildProcess };

  before(async function () {
    redis = await privateRedis();
    stack = await startStack({ name: 'sec-closed', workers: 0, env: { REDIS_URL: redis.url } });
  });
  after(async function () {
    await stack?.stop();
    if (redis?.child.exitCode === null) redis.child.kill('SIGKILL');
  });

  it('limited requests answer 503 NETWORK_ERROR instead of passing unchecked, and the process stays up', async function () {
    const reg = newRegistration();
    expect((await post(stack.url, '/register-pin', reg)).status).to.equal(200);
    const gone = new Promise((resolve) => redis.child.once('exit', resolve));
    redis.child.kill('SIGKILL');
    await gone;
    expectError(await post(stack.url, '/check-login', { pin: reg.pin }), 'NETWORK_ERROR');
    expectError(await post(stack.url, '/register-pin', newRegistration()), 'NETWORK_ERROR');
    expect(stack.webs[0]!.child.exitCode).to.equal(null);
  });
});
