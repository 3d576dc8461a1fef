import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { freePort, runNode, startProcess, startStack, stopProcess, type Stack } from '../helpers/processes.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { REDIS_URL, uniquePrefix } from '../helpers/redis.js';

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

  it('config: every problem at once, one line each, and "ok" with the Redis and prefix when there is none', async function () {
    const prefix = uniquePrefix('check-ok');
    const ok = await runNode(['dist/src/bin/check.js', 'config'], { ...PRODUCTION, KEY_PREFIX: prefix, REDIS_URL: 'redis://:pw-not-shown@127.0.0.1:6379' });
    expect(ok.code, ok.stderr).to.equal(0);
    expect(ok.stdout).to.equal(`ok (redis redis://127.0.0.1:6379, KEY_PREFIX ${prefix})\n`);
    expect(ok.stdout + ok.stderr).to.not.include('pw-not-shown');
    const bad = await runNode(['dist/src/bin/check.js', 'config'], {
      NODE_ENV: 'production',
      REDIS_URL,
      PORT: 'eighty',
      LOG_LEVEL: 'loud',
      WEBHOOK_BEARER_KEY: 'short',
    });
    expect(bad.code).to.equal(1);
    expect(bad.stdout).to.equal('');
    const lines = bad.stderr.trim().split('\n');
    for (const re of [
      /PORT must be a whole number/,
      /LOG_LEVEL must be one of/,
      /WEBHOOK_BEARER_KEY must be at least 16/,
      /WEBHOOK_BEARER_KEY must be at least 32 bytes/,
      /JWT_SECRET is required/,
    ]) {
      expect(
        lines.filter((l) => re.test(l)),
        `${re} in\n${bad.stderr}`,
      ).to.have.length(1);
    }
    expect(lines.every((l) => l.startsWith('pin-auth check config: configuration error: '))).to.equal(true);
  });

  it('config: --help prints the usage and exits 0; unknown flags, checks or extra arguments exit 2', async function () {
    const help = await runNode(['dist/src/bin/check.js', '--help'], {});
    expect(help.code).to.equal(0);
    expect(help.stdout).to.match(/^usage: node dist\/src\/bin\/check\.js <config\|web\|worker>/);
    for (const args of [['config', '--dry'], ['conifg'], [], ['config', 'web']]) {
      const r = await runNode(['dist/src/bin/check.js', ...args], PRODUCTION);
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.stderr, args.join(' ')).to.match(/^check: .*\nusage:/);
      expect(r.stdout).to.equal('');
    }
  });

  it('config and the start-up warn about set-ups that cannot work: log provider with confirmation, an evicting Redis, a duplicate INSTANCE_NAME', async function () {
    const evicting = await PrivateRedis.start(['--maxmemory-policy', 'allkeys-lru']);
    try {
      const env = { REDIS_URL: evicting.url, KEY_PREFIX: uniquePrefix('check-warn'), MESSAGING_PROVIDER: 'log', LOGIN_CONFIRMATION: 'on' };
      const r = await runNode(['dist/src/bin/check.js', 'config'], env);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.match(/warning: LOGIN_CONFIRMATION is on but MESSAGING_PROVIDER=log .* nobody can sign in/);
      expect(r.stderr).to.match(/warning: Redis maxmemory-policy is allkeys-lru, not noeviction/);
      // the start-up says the same
      const started = await startProcess('worker', env);
      try {
        await started.waitForOutput(/maxmemory-policy is allkeys-lru, not noeviction/);
        expect(started.output()).to.match(/nobody can sign in/);
      } finally {
        await stopProcess(started);
      }
    } finally {
      await evicting.kill();
    }
    // the stack's worker writes its snapshot every 300 ms: a second process by its name is seen
    const worker = stack.workers[0]!;
    const dup = await runNode(['dist/src/bin/check.js', 'config'], {
      ...stack.env,
      REDIS_URL,
      METRICS_INTERVAL_MS: '300',
      INSTANCE_NAME: instanceOf(worker.child.pid!),
    });
    expect(dup.code, dup.stderr).to.equal(0);
    expect(dup.stderr).to.match(new RegExp(`warning: another live process uses INSTANCE_NAME=${instanceOf(worker.child.pid!)}`));
    const own = await runNode(['dist/src/bin/check.js', 'config'], {
      ...stack.env,
      REDIS_URL,
      METRICS_INTERVAL_MS: '300',
      INSTANCE_NAME: 'a-name-nobody-uses',
    });
    expect(own.stderr).to.equal('');
    // a process started under that name says so too (it watches for most of its first 3 s interval)
    const second = await startProcess('worker', { ...stack.env, REDIS_URL, METRICS_INTERVAL_MS: '3000', INSTANCE_NAME: instanceOf(worker.child.pid!) });
    try {
      await second.waitForOutput(/another live process uses INSTANCE_NAME/);
    } finally {
      await stopProcess(second);
    }
  });

  it('web: healthy while the node answers /health, unhealthy where nothing listens', async function () {
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
