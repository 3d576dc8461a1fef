import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { request } from '../helpers/http.js';
import { freePort, ROOT } from '../helpers/processes.js';
import { cleanMatching, cleanPrefix, uniquePrefix } from '../helpers/redis.js';

/** The README's first shell block: the quick start, one command per line, comments dropped. */
function quickStart(): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
  return block
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '');
}

/** The fenced block of the given language that follows a README heading. */
function blockAfter(heading: string, lang: string): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf(`## ${heading}`);
  expect(from, heading).to.be.greaterThan(-1);
  return new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(readme.slice(from))![1]!;
}

/** The walkthrough's commands, each with the answer its comment shows (undefined: none shown). */
function walkthrough(): { command: string; answer: string | undefined }[] {
  const steps: { command: string; answer: string | undefined }[] = [];
  let open = false; // the comment lines just after a command, an answer that starts with {
  for (const line of blockAfter('A login, step by step', 'sh').split('\n')) {
    const last = steps[steps.length - 1];
    if (line.trim() === '') open = false;
    else if (!line.startsWith('#')) {
      steps.push({ command: line, answer: undefined });
      open = true;
    } else if (open && last !== undefined && (last.answer !== undefined || line.startsWith('# {'))) last.answer = (last.answer ?? '') + line.slice(1);
    else open = false;
  }
  return steps;
}

/** Runs a shell line in its own process group (so all of npm's children can be stopped together). */
function sh(
  line: string,
  cwd: string,
  env: Record<string, string>,
): { child: ChildProcess; output: () => string; until: (re: RegExp, ms: number) => Promise<void> } {
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
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`"${line}" did not print ${re} in ${ms} ms:\n${out.slice(-3000)}`));
        }, ms);
        const check = (): void => {
          if (re.test(out)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        child.on('exit', (code) => {
          if (re.test(out)) return;
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`"${line}" exited ${code} before ${re}:\n${out.slice(-3000)}`));
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
  // and every process of the group is gone (mocha's workers, the services they started)
  for (let alive = true; alive; ) {
    try {
      process.kill(-child.pid!, 0);
      await new Promise((r) => setTimeout(r, 50));
    } catch {
      alive = false;
    }
  }
  clearTimeout(hard);
};

describe("ops: the README's quick start, verbatim, on a fresh clone", function () {
  this.timeout(600000);
  let dir: string;
  let port: number;
  /** the second `npm start`, which the walkthrough and the client snippet talk to */
  let service: ReturnType<typeof sh> | undefined;
  const prefix = uniquePrefix('quickstart');

  before(function () {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pin-auth-quickstart-'));
    // the committed tree, as a person cloning the repository gets it
    execFileSync('git', ['clone', '--quiet', '--depth', '1', `file://${ROOT}`, dir], { stdio: 'ignore' });
  });
  after(async () => {
    if (service) await stopGroup(service.child);
    rmSync(dir, { recursive: true, force: true });
    await cleanPrefix(prefix);
  });

  it('has the two commands', function () {
    expect(quickStart()).to.deep.equal(['npm ci && npm start', 'npm test']);
  });

  it('`npm ci && npm start` installs, builds and serves the login page, the API and its reference', async function () {
    port = await freePort();
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

  it('`npm start` again builds nothing that did not change, and answers within seconds', async function () {
    const state = path.join(dir, 'dist/tsconfig.tsbuildinfo');
    const built = statSync(state).mtimeMs;
    const started = Date.now();
    service = sh('npm start', dir, { PORT: String(port), KEY_PREFIX: prefix, NODE_ENV: 'development' });
    await service.until(/pin-auth started/, 120000);
    const seconds = (Date.now() - started) / 1000;
    expect(statSync(state).mtimeMs, 'tsc compiled again').to.equal(built);
    expect((await request(`http://127.0.0.1:${port}`, 'GET', '/health')).status).to.equal(200);
    // generous for a loaded 2-core machine; a full build takes minutes there
    expect(seconds).to.be.below(45);
  });

  it("the walkthrough's commands, as written, answer as it shows (refresh and logout included)", async function () {
    const steps = walkthrough();
    expect(steps.map((s) => s.command.split(' ')[0])).to.include.members(['curl', 'npm', 'TOKEN=$(node']);
    // one bash session (the variables carry over), each command's output after a marker
    const script = [
      'set -euo pipefail',
      ...steps.flatMap((s, i) => [`echo "@@step ${i}"`, s.command.replaceAll('localhost:3000', `localhost:${port}`), 'echo']),
    ].join('\n');
    const out = execFileSync('bash', ['-c', script], {
      cwd: dir,
      env: { ...process.env, PORT: String(port), KEY_PREFIX: prefix, NODE_ENV: 'development' },
      encoding: 'utf8',
      timeout: 120000,
    });
    const outputs = out.split(/^@@step \d+\n/m).slice(1);
    expect(outputs).to.have.length(steps.length);
    steps.forEach((step, i) => {
      if (step.answer === undefined) return;
      const actual = JSON.parse(outputs[i]!) as Record<string, unknown>;
      expect(actual.success, `${step.command}\n${outputs[i]}`).to.equal(true);
      // every field the README shows is in the answer (values shortened with … are examples)
      for (const [, field] of step.answer.matchAll(/"(\w+)":/g)) expect(outputs[i], `${step.command}: "${field}"`).to.include(`"${field}":`);
    });
    const checks = steps.map((s, i) => [s, outputs[i]!] as const).filter(([s]) => s.command.includes('/check-login'));
    expect(JSON.parse(checks[checks.length - 1]![1]).verified).to.equal(true);
    // logged out: the token no longer opens the profile
    const token = (JSON.parse(readFileSync(path.join(dir, 'login.json'), 'utf8')) as { token: string }).token;
    expect((await request(`http://127.0.0.1:${port}`, 'GET', '/profile', { token })).status).to.equal(401);
  });

  it('the client in ten lines, as given, signs Ana in', async function () {
    const code = blockAfter('A client in ten lines', 'ts').replaceAll('http://localhost:3000', `http://localhost:${port}`);
    writeFileSync(path.join(dir, 'readme-client.mjs'), code);
    const client = sh('node readme-client.mjs', dir, {});
    try {
      await client.until(/^PIN: \S+ https:\/\/wa\.me\/15551234567\?text=/m, 60000);
      const text = /^(PIN: \S+)/m.exec(client.output())![1]!;
      execFileSync('npm', ['run', 'simulate', '--', '--from', '+5511999997777', '--name', 'Ana Silva', text], {
        cwd: dir,
        env: { ...process.env, PORT: String(port), KEY_PREFIX: prefix, NODE_ENV: 'development' },
        stdio: 'ignore',
      });
      await client.until(/^Ana$/m, 60000);
      expect(
        client
          .output()
          .split('\n')
          .filter((l) => /^(waiting|awaiting-confirmation|signed-in)$/.test(l)),
      ).to.deep.equal(['waiting', 'signed-in']);
    } finally {
      await stopGroup(client.child);
    }
  });

  it('`npm test` builds and its tests start passing (stopped after the first ones: the suite itself is this run)', async function () {
    await stopGroup(service!.child);
    service = undefined;
    // its suite's prefixes under a root of their own: stopped half-way, its tests leave keys
    const root = `${prefix}-suite`;
    const run = sh(quickStart()[1]!, dir, { TEST_PREFIX_ROOT: root });
    try {
      await run.until(/(✔.*\n[\s\S]*){2}/, 360000);
      const failed = /^\s+\d+\) [\s\S]*/m.exec(run.output());
      expect(run.output(), `a failing test:\n${failed?.[0].slice(0, 3000)}`).to.not.match(/^\s+\d+\) /m);
    } finally {
      await stopGroup(run.child);
      await cleanMatching(`${root}-*`);
    }
  });

  it('a build leaves no compiled file whose source is gone (a stale dist/ never runs a deleted test)', async function () {
    // what a deleted test leaves in dist/ (tsc never removes an output): its compiled file and map
    const compiled = path.join(dir, 'dist/test/ops/layers.test.js');
    const orphan = path.join(dir, 'dist/test/ops/deleted.test.js');
    copyFileSync(compiled, orphan);
    copyFileSync(`${compiled}.map`, `${orphan}.map`);
    execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: 'ignore', timeout: 300000 });
    expect(existsSync(orphan)).to.equal(false);
    expect(existsSync(`${orphan}.map`)).to.equal(false);
    expect(existsSync(compiled)).to.equal(true);
    expect(existsSync(`${compiled}.map`)).to.equal(true);
  });
});
