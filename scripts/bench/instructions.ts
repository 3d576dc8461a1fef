import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jsonPost, pairFrom, profileRequest, refreshRequest, registerRequest, webhookRequest, type BenchContext, type TokenPair } from './context.js';
import { closeAgent, isOk, runAll, send, type Answer, type RequestSpec } from './load.js';
import { Sequence, pinFor } from './payloads.js';
import { answers, freePort, procfileScript, spawnNode, stopChild, waitUntil } from './processes.js';
import { textTable } from './report.js';
import { Stack } from './stack.js';
import { parseArgs } from './options.js';

/**
 * `npm run bench:instructions [-- <requests> [<endpoint>]]`: instructions one web node executes
 * per request of register-pin (the client's emoji string, and the server's: production's
 * default), check-login (pending), profile, refresh-token and the webhook, counted by valgrind's
 * callgrind.
 * CPU time on a shared VM moves 10–20 % between runs of the same code; this count repeats to
 * within about 0.2 % (register-pin within 3–5 % at 4,000 requests, 0.1 % at 10,000), so a
 * change to a hot path is judged by it before the benchmark's throughput rounds. The node runs
 * with the Procfile's flags plus `--single-threaded` (V8's compiler and GC threads then work on
 * the main thread: counted every time, in the same order), the requests go over 16
 * connections, and only the measured requests are counted (instrumentation is switched on
 * after as many requests of warm-up, at least MIN_WARMUP). User-space instructions
 * only: the kernel's side of the socket calls is not in them. Needs valgrind (Debian: valgrind).
 */
const requests = Number(process.argv[2] ?? 4000);
/** only the endpoints whose name contains this (e.g. `refresh`) */
const only = process.argv[3] ?? '';
if (!Number.isInteger(requests) || requests < 100) {
  process.stderr.write('usage: npm run bench:instructions [-- <requests, at least 100> [<endpoint name part>]]\n');
  process.exit(2);
}
/**
 * At 50 times its speed the node still compiles its hot paths a few thousand requests in (a
 * request then waits past the 2 s Redis command timeout): warm-up is never shorter than this.
 */
const MIN_WARMUP = 2000;
const warmup = Math.max(requests, MIN_WARMUP);
const log = (message: string): void => {
  process.stderr.write(`[instructions] ${message}\n`);
};

const stack = new Stack({ nodeArgs: [] });
const ctx: BenchContext = { stack, sizes: parseArgs(['--quick']).sizes, seq: new Sequence(), log };
/** PINs registered before the check-login runs, polled round robin as the benchmark does */
const POOL = 200;
const pending = Array.from({ length: POOL }, () => ctx.seq.take());
/** Sessions for profile and refresh-token: real logins (a worker runs only while they are made). */
const SESSIONS = 32;
const sessions: TokenPair[] = [];

/**
 * SESSIONS logins through the node at `url` and a worker: registered, messaged, then collected
 * by check-login (polled until each is verified; a login is handed out once).
 */
async function signIn(url: string): Promise<void> {
  if (sessions.length > 0) return;
  const ns = Array.from({ length: SESSIONS }, () => ctx.seq.take());
  await stack.startWorker();
  try {
    const regs = await runAll(SESSIONS, 16, (i) => ({ url, spec: registerRequest(ns[i]!) }));
    const hooks = await runAll(SESSIONS, 16, (i) => ({ url, spec: webhookRequest(ctx, ns[i]!) }));
    if (!regs.every(isOk) || !hooks.every(isOk)) throw new Error('the logins for profile and refresh-token could not be set up');
    const deadline = Date.now() + 120_000;
    let waiting = ns;
    while (waiting.length > 0 && Date.now() < deadline) {
      const answers = await Promise.all(waiting.map((n) => send(url, jsonPost('/check-login', { pin: pinFor(n) }))));
      const pairs = answers.map((a) => pairFrom(a.status, a.body));
      for (const pair of pairs) if (pair) sessions.push(pair);
      waiting = waiting.filter((_, i) => pairs[i] === null);
      if (waiting.length > 0) await new Promise((r) => setTimeout(r, 200));
    }
    if (waiting.length > 0) throw new Error(`${waiting.length} of ${SESSIONS} logins were not completed`);
  } finally {
    await stack.stopWorkers();
  }
}

interface Endpoint {
  name: string;
  /** runs on the node before its warm-up */
  prepare?(url: string): Promise<void>;
  /** settings of this endpoint's node beyond the benchmark stack's */
  env?: Record<string, string>;
  request(): RequestSpec;
  onAnswer?(answer: Answer): void;
}

let profiled = 0;
/** refresh-token: a pair leaves the pool when sent and its successor comes back with the answer */
const refreshPool: TokenPair[] = [];
const endpoints: Endpoint[] = [
  { name: 'register-pin', request: () => registerRequest(ctx.seq.take()) },
  {
    // production's default (EMOJI_CHOICE=server): the server draws four candidate strings and hashes each
    name: 'register-pin (server draws)',
    env: { EMOJI_CHOICE: 'server' },
    request: () => jsonPost('/register-pin', { pin: pinFor(ctx.seq.take()) }),
  },
  {
    name: 'check-login (pending)',
    prepare: async (url) => {
      const register = await runAll(POOL, 16, (i) => ({ url, spec: registerRequest(pending[i]!) }));
      if (!register.every(isOk)) throw new Error('the PINs to check could not be registered');
    },
    request: (() => {
      let c = 0;
      return () => jsonPost('/check-login', { pin: pinFor(pending[c++ % POOL]!) });
    })(),
  },
  { name: 'profile', prepare: signIn, request: () => profileRequest(sessions[profiled++ % sessions.length]!.token) },
  {
    name: 'refresh-token',
    prepare: async (url) => {
      await signIn(url);
      refreshPool.push(...sessions);
    },
    request: () => refreshRequest(refreshPool.shift() ?? { token: 'pool-empty', refreshToken: 'pool-empty' }),
    onAnswer: (a) => {
      const next = pairFrom(a.status, a.body);
      if (next) refreshPool.push(next);
    },
  },
  { name: 'webhook', request: () => webhookRequest(ctx, ctx.seq.take()) },
];

/** callgrind's total of the dump it wrote (`totals:` or `summary:` line). */
function totalOf(file: string): number {
  const m = /^(?:totals|summary): (\d+)/m.exec(readFileSync(file, 'utf8'));
  if (!m) throw new Error(`no total in ${file}`);
  return Number(m[1]);
}

const rows: string[][] = [];
try {
  const web = procfileScript('web');
  for (const endpoint of endpoints.filter((e) => e.name.includes(only))) {
    const port = await freePort();
    const out = path.join(os.tmpdir(), `pin-auth-callgrind-${process.pid}-${port}`);
    const wrap = ['valgrind', '--tool=callgrind', '--smc-check=all', '--instr-atstart=no', `--callgrind-out-file=${out}`];
    const env = { ...stack.serviceEnv('web-callgrind', port), ...endpoint.env };
    const child = spawnNode('web-callgrind', web.script, env, [...web.nodeArgs, '--single-threaded'], port, wrap);
    try {
      await waitUntil(child, () => answers(`${child.url}/health`), 180_000);
      const url = child.url;
      await endpoint.prepare?.(url);
      log(`${endpoint.name}: ${warmup} requests of warm-up, then ${requests} counted`);
      const make = (): { url: string; spec: RequestSpec } => ({ url, spec: endpoint.request() });
      await runAll(warmup, 16, make, endpoint.onAnswer);
      execFileSync('callgrind_control', ['--instr=on', String(child.pid)], { stdio: 'ignore' });
      const answered = await runAll(requests, 16, make, endpoint.onAnswer);
      execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
      const ok = answered.filter(isOk).length;
      if (ok !== requests) {
        const failed = answered.find((a) => !isOk(a));
        throw new Error(`${endpoint.name}: ${requests - ok} of ${requests} requests failed (e.g. ${failed?.status} ${failed?.body.slice(0, 200)})`);
      }
      rows.push([endpoint.name, Math.round(totalOf(`${out}.1`) / requests).toLocaleString('en-US'), String(requests)]);
    } finally {
      await stopChild(child);
      rmSync(`${out}`, { force: true });
      rmSync(`${out}.1`, { force: true });
    }
  }
  process.stdout.write(`\nInstructions per request, one web node under callgrind (user space, --single-threaded)\n`);
  process.stdout.write(`${textTable(['endpoint', 'instructions / request', 'requests counted'], rows)}\n`);
} finally {
  closeAgent();
  await stack.stop();
}
