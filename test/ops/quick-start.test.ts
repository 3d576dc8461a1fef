import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { request } from '../helpers/http.js';
import { freePort, ROOT } from '../helpers/processes.js';
import { cleanPrefix, uniquePrefix } from '../helpers/redis.js';

/** The README's first shell block: the quick start, one command per line, comments dropped. */
function quickStart(): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
  return block
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '');
}

/** Runs a shell line in its own process group (so all of npm's children can be stopped together). */
function sh(line: string, cwd: string, env: Record<string, string>): { child: ChildProcess; output: () => string; until: (re: RegExp, ms: number) => Promise<void> } {
  const child = spawn('bash', ['-c', line], { cwd, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters = new Set<() => void>();
  const on = (b: Buffer): void => {
    out += b.toString();
    for (const w of waiters) w();
  };
  child.stdout!.on('data', on);
  child.stderr!.on('data', on);
  return {
    child,
    output: () => out,
    until: (re, ms) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => (waiters.delete(check), reject(new Error(`"${line}" did not print ${re} in ${ms} ms:\n${out.slice(-3000)}`))), ms);
        const check = (): void => {
          if (re.test(out)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        child.on('exit', (code) => {
          if (!re.test(out)) (waiters.delete(check), clearTimeout(timer), reject(new Error(`"${line}" exited ${code} before ${re}:\n${out.slice(-3000)}`)));
        });
        waiters.add(check);
        check();
      }),
  };
}

const stopGroup = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid!, 'SIGTERM');
  const hard = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30000);
  await exited;
  clearTimeout(hard);
};

describe("ops: the README's quick start, verbatim, on a fresh clone", function () {
  this.timeout(600000);
  let dir: string;
  const prefix = uniquePrefix('quickstart');

  before(function () {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pin-auth-quickstart-'));
    // the committed tree, as a person cloning the repository gets it
    execFileSync('git', ['clone', '--quiet', '--depth', '1', `file://${ROOT}`, dir], { stdio: 'ignore' });
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await cleanPrefix(prefix);
  });

  it('has the two commands', function () {
    expect(quickStart()).to.deep.equal(['npm ci && npm start', 'npm test']);
  });

  it('`npm ci && npm start` installs, builds and serves the login page, the API and its reference', async function () {
    const port = await freePort();
    const run = sh(quickStart()[0]!, dir, { PORT: String(port), KEY_PREFIX: prefix, NODE_ENV: 'development' });
    try {
      await run.until(/pin-auth started/, 420000);
      const base = `http://127.0.0.1:${port}`;
      expect((await request(base, 'GET', '/health')).status).to.equal(200);
      const page = await request(base, 'GET', '/');
      expect(page.status).to.equal(200);
      expect(page.text).to.match(/Sign in with WhatsApp/);
      expect((await request(base, 'GET', '/demo/app.js')).status).to.equal(200);
      expect((await request(base, 'GET', '/openapi.json')).status).to.equal(200);
      expect(run.output()).to.match(/key prefix +test-quickstart/);
    } finally {
      await stopGroup(run.child);
    }
  });

  it('`npm test` builds and its tests start passing (stopped after the first ones: the suite itself is this run)', async function () {
    const run = sh(quickStart()[1]!, dir, {});
    try {
      await run.until(/(✔.*\n[\s\S]*){2}/, 360000);
      const failed = /^\s+\d+\) [\s\S]*/m.exec(run.output());
      expect(run.output(), `a failing test:\n${failed?.[0].slice(0, 3000)}`).to.not.match(/^\s+\d+\) /m);
    } finally {
      await stopGroup(run.child);
    }
  });
});
