import os from 'node:os';
import path from 'node:path';
import type { BenchContext } from './bench/context.js';
import { closeAgent } from './bench/load.js';
import { parseArgs } from './bench/options.js';
import { Sequence } from './bench/payloads.js';
import { ROOT } from './bench/processes.js';
import { measureCrypto } from './bench/ceiling.js';
import { writeHtml } from './bench/html.js';
import { curveTables, rows, table, writeJson, type Figures } from './bench/report.js';
import { endpoints } from './bench/scenarios/endpoints.js';
import { ingestion } from './bench/scenarios/ingestion.js';
import { login } from './bench/scenarios/login.js';
import { loginCosts } from './bench/scenarios/login-cost.js';
import { memory } from './bench/scenarios/memory.js';
import { pipeline } from './bench/scenarios/pipeline.js';
import { Stack, stopOnInterrupt } from './bench/stack.js';

/**
 * `npm run bench [-- --quick] [-- --only=ingestion,login,pipeline,endpoints,memory,cost] [-- --profile] [-- --out=dir]`:
 * the service (two web nodes, one to four workers, built JavaScript, production settings) on
 * loopback beside two baselines (bare Koa; the simplest pipeline from webhook to socket), every
 * figure printed beside its target, the curves as tables, all written to bench/results/latest.json and drawn in latest.html beside it.
 * Build first (`npm run build`); this builds nothing.
 */
let opts: ReturnType<typeof parseArgs>;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}
const started = Date.now();
// A reader gone (a terminal closed, a parent test killed with its process group) makes writes fail
// with EPIPE: that must not crash the run before the interrupt handler deletes its keys.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
const log = (message: string): void => {
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${message}\n`);
};

const profileDir = path.join(os.tmpdir(), `pin-auth-bench-profiles-${started}`);
const nodeArgs = opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
const stack = new Stack({ nodeArgs, onStart: (name, pid) => opts.profile && log(`${name} is pid ${pid}`) });
const ctx: BenchContext = { stack, sizes: opts.sizes, seq: new Sequence(), log };
const figures: Figures = {};
const loadBefore = os.loadavg();
let failed = false;

const interrupt = stopOnInterrupt(stack, log);

try {
  log(`${opts.mode} run, prefix ${stack.prefix}, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
  await stack.startWebs(2);
  for (const name of opts.scenarios) {
    if (name === 'ingestion') figures.ingestion = await ingestion(ctx);
    if (name === 'login') figures.login = await login(ctx);
    if (name === 'pipeline') figures.pipeline = await pipeline(ctx);
    if (name === 'endpoints') figures.endpoints = await endpoints(ctx);
    if (name === 'memory') figures.memory = await memory(ctx);
    if (name === 'cost') figures.cost = await loginCosts(ctx);
  }
  // the same hour's cost of the cryptography each request must do: the ceilings' input
  if (figures.endpoints || figures.ingestion) figures.crypto = measureCrypto();
} catch (err) {
  failed = true;
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
} finally {
  const deleted = await stack.stop();
  closeAgent();
  log(`stopped; ${deleted} keys under ${stack.prefix} deleted`);
  for (const line of stack.output()) log(`printed by ${line.slice(0, 600)}`);
}
// an interrupted run writes no results: they would replace the last complete ones
await interrupt.settle();

const all = rows(figures);
process.stdout.write(`\n${table(all)}\n\n${curveTables(figures).join('\n\n')}\n\n`);
const outDir = opts.outDir ?? path.join(ROOT, 'bench/results');
const file = path.join(outDir, 'latest.json');
const meta = {
  mode: opts.mode,
  scenarios: opts.scenarios,
  startedAt: new Date(started).toISOString(),
  seconds: Math.round((Date.now() - started) / 100) / 10,
  loadAverageBefore: loadBefore,
  loadAverageAfter: os.loadavg(),
  complete: !failed,
};
writeJson(file, meta, figures, all);
writeHtml(path.join(outDir, 'latest.html'), meta, figures, all);
log(`written to ${path.relative(process.cwd(), file)} and latest.html beside it`);
if (opts.profile) log(`CPU profiles in ${profileDir} (open them in Chrome DevTools' Performance panel)`);
process.exit(failed ? 1 : 0);
