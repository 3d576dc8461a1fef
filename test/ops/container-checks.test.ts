import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { freePort, runNode, startStack, stopProcess, type Stack } from '../helpers/processes.js';
import { REDIS_URL } from '../helpers/redis.js';

/**
 * dist/src/bin/check.js, which Compose and the Dockerfile run: the one-shot configuration check
 * before any node starts, and each role's healthcheck, against real processes.
 */
const PRODUCTION = { NODE_ENV: 'production', REDIS_URL, JWT_SECRET: 'j'.repeat(40), WEBHOOK_SECRET: 'w'.repeat(40) };

describe('ops: the container checks (check.js config | web | worker)', function () {
  this.timeout(60000);
  let stack: Stack;

  before(async function () {
    stack = await startStack({ name: 'container-checks', webs: 1, workers: 1, env: { METRICS_INTERVAL_MS: '300' } });
  });
  after(async () => stack?.stop());

  it('config: a production environment that loads passes; a missing webhook credential is one clear line', async function () {
    const ok = await runNode(['dist/src/bin/check.js', 'config'], PRODUCTION);
    expect(ok.code, ok.stderr).to.equal(0);
    const { WEBHOOK_SECRET: _w, ...open } = PRODUCTION;
    const bad = await runNode(['dist/src/bin/check.js', 'config'], open);
    expect(bad.code).to.equal(1);
    expect(bad.stderr.trim().split('\n')).to.have.length(1);
    expect(bad.stderr).to.match(/configuration error: One of WEBHOOK_SECRET/);
  });

  it("web: healthy while the node answers /health, unhealthy where nothing listens", async function () {
    const web = stack.webs[0]!;
    const ok = await runNode(['dist/src/bin/check.js', 'web'], { ...stack.env, REDIS_URL, PORT: String(web.port) });
    expect(ok.code, ok.stderr).to.equal(0);
    const none = await runNode(['dist/src/bin/check.js', 'web'], { ...stack.env, REDIS_URL, PORT: String(await freePort()) });
    expect(none.code).to.equal(1);
  });

  it('worker: healthy while the worker writes its snapshot; one that never ran, or stopped, is not', async function () {
    const worker = stack.workers[0]!;
    const env = { ...stack.env, REDIS_URL, METRICS_INTERVAL_MS: '300', INSTANCE_NAME: instanceOf(worker.child.pid!) };
    const ok = await runNode(['dist/src/bin/check.js', 'worker'], env);
    expect(ok.code, ok.stderr).to.equal(0);
    const never = await runNode(['dist/src/bin/check.js', 'worker'], { ...env, INSTANCE_NAME: 'no-such-worker' });
    expect(never.code).to.equal(1);
    expect(never.stderr).to.match(/no metrics snapshot from no-such-worker/);
    await stopProcess(worker);
    stack.workers.length = 0;
    // three intervals and two seconds later its last snapshot is too old
    await new Promise((r) => setTimeout(r, 3 * 300 + 2500));
    const stopped = await runNode(['dist/src/bin/check.js', 'worker'], env);
    expect(stopped.code).to.equal(1);
    expect(stopped.stderr).to.match(/s old/);
  });
});

/** The INSTANCE_NAME the helpers gave the process with this pid (read back from its environment). */
function instanceOf(pid: number): string {
  const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return env.find((e) => e.startsWith('INSTANCE_NAME='))!.slice('INSTANCE_NAME='.length);
}
