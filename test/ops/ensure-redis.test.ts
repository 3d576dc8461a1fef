import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { freePort, ROOT } from '../helpers/processes.js';

const SCRIPT = path.join(ROOT, 'scripts/ensure-redis.sh');
const which = (cmd: string): string => spawnSync('bash', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).stdout.trim();

/**
 * A PATH with only what a stock machine is sure to have (bash, node, seq, sleep) plus the given
 * stubs: no GNU `timeout`, no redis-server unless asked for.
 */
function sandboxPath(stubs: Record<string, string>, extra: string[] = []): { dir: string; PATH: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ensure-redis-'));
  for (const tool of ['bash', 'node', 'seq', 'sleep', ...extra]) symlinkSync(which(tool), path.join(dir, tool));
  for (const [name, body] of Object.entries(stubs)) {
    writeFileSync(path.join(dir, name), `#!${which('bash')}\n${body}\n`);
    chmodSync(path.join(dir, name), 0o755);
  }
  return { dir, PATH: dir };
}

function run(env: Record<string, string>, timeoutMs = 20000): Promise<{ code: number | null; out: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    // from the repository, as `npm start` runs it
    const child = spawn(which('bash'), [SCRIPT], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, ms: Date.now() - started });
    });
  });
}

describe('ops: scripts/ensure-redis.sh is portable', function () {
  this.timeout(30000);

  it('finds a Redis that answers, without GNU timeout on the PATH', async function () {
    const box = sandboxPath({});
    try {
      // the suite's own Redis: a local one is pinged on its port, any other is left alone
      const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
      const local = url.protocol === 'redis:' && ['127.0.0.1', 'localhost'].includes(url.hostname);
      const r = await run({ PATH: box.PATH, REDIS_URL: url.href });
      expect(r.out).to.match(local ? new RegExp(`answering at 127\\.0\\.0\\.1:${url.port || 6379}`) : /points elsewhere/);
      expect(r.code).to.equal(0);
    } finally {
      rmSync(box.dir, { recursive: true, force: true });
    }
  });

  it('on macOS without Redis and without root: says what to install and stops at once', async function () {
    const box = sandboxPath({ uname: 'echo Darwin', id: 'echo 501' });
    try {
      const port = await freePort();
      const r = await run({ PATH: box.PATH, REDIS_URL: `redis://127.0.0.1:${port}` });
      expect(r.code).to.equal(1);
      expect(r.out)
        .to.match(/brew install redis/)
        .and.to.match(new RegExp(`127\\.0\\.0\\.1:${port}`));
      expect(r.ms).to.be.below(8000);
    } finally {
      rmSync(box.dir, { recursive: true, force: true });
    }
  });

  it('on Linux without Redis, not root: names the package instead of calling apt-get', async function () {
    const box = sandboxPath({ uname: 'echo Linux', id: 'echo 1000', 'apt-get': 'echo "apt-get must not run" >&2; exit 3' });
    try {
      const r = await run({ PATH: box.PATH, REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
      expect(r.code).to.equal(1);
      expect(r.out)
        .to.match(/apt-get install redis-server/)
        .and.not.to.match(/must not run/);
    } finally {
      rmSync(box.dir, { recursive: true, force: true });
    }
  });

  it('as root on Debian without redis-server: installs it with apt-get (stubbed here), then starts it in a directory of its own, with no persistence', async function () {
    // the stub "installs" by putting the machine's redis-server on the sandbox PATH
    const real = which('redis-server');
    const box = sandboxPath({ uname: 'echo Linux', id: 'echo 0' });
    writeFileSync(
      path.join(box.dir, 'apt-get'),
      `#!${which('bash')}\necho "apt-get $*" >> "${box.dir}/apt.log"\n[ "$1" = install ] && ${which('ln')} -sf "${real}" "${box.dir}/redis-server"\nexit 0\n`,
    );
    chmodSync(path.join(box.dir, 'apt-get'), 0o755);
    const port = await freePort();
    try {
      const r = await run({ PATH: box.PATH, REDIS_URL: `redis://127.0.0.1:${port}` });
      expect(r.out)
        .to.match(/installing redis-server with apt-get/)
        .and.to.match(/redis: up/);
      expect(r.code).to.equal(0);
      const redis = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 0, retryStrategy: () => null });
      redis.on('error', () => undefined);
      try {
        expect(await redis.ping()).to.equal('PONG');
        // not the repository (a dump.rdb there would be loaded, and one written there)
        const [, dir] = (await redis.config('GET', 'dir')) as [string, string];
        expect(dir === ROOT || dir.startsWith(`${ROOT}/`), dir).to.equal(false);
        expect(r.out).to.include(`starting redis-server in ${dir}`);
        expect(await redis.config('GET', 'save')).to.deep.equal(['save', '']);
        expect(await redis.config('GET', 'appendonly')).to.deep.equal(['appendonly', 'no']);
      } finally {
        redis.disconnect();
        // the private server the script started (never the shared one)
        spawnSync(which('redis-cli'), ['-p', String(port), 'shutdown', 'nosave']);
      }
    } finally {
      rmSync(box.dir, { recursive: true, force: true });
    }
  });

  it('the repository holds no Redis dump for it to load', function () {
    const tracked = spawnSync('git', ['ls-files', '*.rdb', '**/*.rdb'], { cwd: ROOT, encoding: 'utf8' });
    expect(tracked.status).to.equal(0);
    expect(tracked.stdout.trim()).to.equal('');
  });
});
