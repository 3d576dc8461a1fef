import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jsonPost, registerRequest, webhookRequest, type BenchContext } from './context.js';
import { closeAgent, isOk, runAll, type RequestSpec } from './load.js';
import { Sequence, pinFor } from './payloads.js';
import { answers, freePort, procfileScript, spawnNode, stopChild, waitUntil } from './processes.js';
import { textTable } from './report.js';
import { Stack } from './stack.js';
import { parseArgs } from './options.js';

/**
 * `npm run bench:instructions [-- <requests>]`: instructions one web node executes per request
 * of register-pin, check-login (pending) and the webhook, counted by valgrind's callgrind.
 * CPU time on a shared VM moves 10–20 % between runs of the same code; this count repeats to
 * within about 0.2 %, so a change to a hot path is judged by it before the benchmark's
 * throughput rounds. The node runs with the Procfile's flags plus `--single-threaded` (V8's
 * compiler and GC threads then work on the main thread: counted every time, in the same
 * order), the requests go over 16 connections, and only the measured requests are counted
 * (instrumentation is switched on after as many requests of warm-up, at least MIN_WARMUP). User-space instructions
 * only: the kernel's side of the socket calls is not in them. Needs valgrind (Debian: valgrind).
 */
const requests = Number(process.argv[2] ?? 4000);
if (!Number.isInteger(requests) || requests < 100) {
  process.stderr.write('usage: npm run bench:instructions [-- <requests, at least 100>]\n');
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
const endpoints: Array<{ name: string; request: () => RequestSpec }> = [
  { name: 'register-pin', request: () => registerRequest(ctx.seq.take()) },
  {
    name: 'check-login (pending)',
    request: (() => {
      let c = 0;
      return () => jsonPost('/check-login', { pin: pinFor(pending[c++ % POOL]!) });
    })(),
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
  for (const endpoint of endpoints) {
    const port = await freePort();
    const out = path.join(os.tmpdir(), `pin-auth-callgrind-${process.pid}-${port}`);
    const wrap = ['valgrind', '--tool=callgrind', '--smc-check=all', '--instr-atstart=no', `--callgrind-out-file=${out}`];
    const child = spawnNode('web-callgrind', web.script, stack.serviceEnv('web-callgrind', port), [...web.nodeArgs, '--single-threaded'], port, wrap);
    try {
      await waitUntil(child, () => answers(`${child.url}/health`), 180_000);
      const url = child.url;
      const register = await runAll(POOL, 16, (i) => ({ url, spec: registerRequest(pending[i]!) }));
      if (!register.every(isOk)) throw new Error('the PINs to check could not be registered');
      log(`${endpoint.name}: ${warmup} requests of warm-up, then ${requests} counted`);
      await runAll(warmup, 16, () => ({ url, spec: endpoint.request() }));
      execFileSync('callgrind_control', ['--instr=on', String(child.pid)], { stdio: 'ignore' });
      const answered = await runAll(requests, 16, () => ({ url, spec: endpoint.request() }));
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
