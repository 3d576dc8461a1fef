import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jsonPost, pairFrom, profileRequest, refreshRequest, registerRequest, webhookRequest, type BenchContext, type TokenPair } from './context.js';
import { closeAgent, isOk, runAll, type Answer, type RequestSpec } from './load.js';
import { Sequence, pinFor } from './payloads.js';
import { answers, freePort, procfileScript, spawnNode, stopChild, waitUntil, type Child } from './processes.js';
import { textTable } from './report.js';
import { Stack } from './stack.js';
import { parseArgs } from './options.js';
import { startBaseline } from './baseline.js';
import { countCallgrind, type Counted } from './callgrind.js';
import { CompletionCounter } from './redis.js';

/**
 * `npm run bench:instructions [-- <requests> [<endpoint>] [--warmup=<requests>] [--sessions=<logins>]]`: instructions one web node executes
 * per request of register-pin (the client's emoji string, and the server's: production's
 * default), check-login (pending, and verified: each request collects a login), profile,
 * refresh-token and the webhook, counted by valgrind's callgrind, beside bare Koa's (the
 * benchmark's baseline) for the same requests.
 * CPU time on a shared VM moves 10–20 % between runs of the same code; this count repeated to
 * within 0.1 % (check-login) and 1.2 % (the webhook, whose intake writes are batched per event-loop
 * turn) in three runs, so a change to a hot path is judged by it before the benchmark's
 * throughput rounds. Each node runs with its own flags (the Procfile's for the web node, none for
 * bare Koa, as the benchmark starts them) plus `--single-threaded` (V8's compiler and GC threads
 * then work on the main thread, in the same order every time), the requests go over 16
 * connections, and only the measured requests are counted (instrumentation is switched on after
 * as many requests of warm-up, at least MIN_WARMUP). V8's optimising compiler is left out of
 * the count and printed beside it (see the note printed with the table). User-space
 * instructions only: the kernel's side of the socket calls is not in them, nor Redis's work.
 * Under valgrind OpenSSL cannot use the CPU's SHA extensions: SHA-256 (HMACs, ES256's digest)
 * counts for more than it costs outside it (an HMAC of the 651-byte webhook: 3.1 µs with them,
 * 5.7–7.7 µs with them masked). Needs valgrind (Debian: valgrind).
 */
const args = process.argv.slice(2);
const positional = args.filter((a) => !a.startsWith('--'));
const requests = Number(positional[0] ?? 4000);
/** only the endpoints whose name contains this (e.g. `refresh`) */
const only = positional[1] ?? '';
/** `--warmup=N`: fewer requests of warm-up than MIN_WARMUP, for the tool's own test (the count then includes compiling) */
const warmupArg = args.find((a) => a.startsWith('--warmup='))?.slice('--warmup='.length);
/** `--sessions=N`: logins behind profile and refresh-token (default: as many as the full benchmark's) */
const sessionsArg = args.find((a) => a.startsWith('--sessions='))?.slice('--sessions='.length);
const badCount = (v: string | undefined): boolean => v !== undefined && !/^\d+$/.test(v);
if (!Number.isInteger(requests) || requests < 100 || badCount(warmupArg) || badCount(sessionsArg) || sessionsArg === '0') {
  process.stderr.write('usage: npm run bench:instructions [-- <requests, at least 100> [<endpoint name part>] [--warmup=<requests>] [--sessions=<logins>]]\n');
  process.exit(2);
}
/**
 * Warm-up is never shorter than this. After 4,000 webhooks V8 was still optimising and
 * deoptimising the hot path: a count of the next 4,000 was 13 % compiler (345,700 a request in
 * all); after 20,000 the compiler's share was 0.4–7 % from run to run (timers and rare events
 * still send a function back to it), which is why it is left out, and the rest repeated to 1.2 %.
 */
const MIN_WARMUP = 20_000;
const warmup = warmupArg !== undefined ? Number(warmupArg) : Math.max(requests, MIN_WARMUP);
const log = (message: string): void => {
  process.stderr.write(`[instructions] ${message}\n`);
};

const stack = new Stack({ nodeArgs: [] });
const ctx: BenchContext = { stack, sizes: parseArgs(['--quick']).sizes, seq: new Sequence(), log };
/** PINs registered before the check-login runs, polled round robin as the benchmark does */
const POOL = 200;
const pending = Array.from({ length: POOL }, () => ctx.seq.take());
/**
 * Sessions for profile and refresh-token: real logins (a worker and a plain web node run only
 * while they are made), polled in turn. As many as the full benchmark's profile and
 * refresh-token runs poll (6,000), so the counted node's verified-token cache works as a busy
 * node's does: with 32, a cache that held fewer tokens than its bound (two generations of Maps,
 * replaced since) never showed.
 */
const SESSIONS = sessionsArg !== undefined ? Number(sessionsArg) : parseArgs([]).sizes.sessionPool;
const sessions: TokenPair[] = [];

/**
 * `n` logins through a plain web node (not the one counted: under callgrind thousands of logins
 * would take minutes) and a worker, registered and messaged; resolves once the worker completed
 * them all, uncollected. The counted node shares the prefix and the signing key in Redis, so it
 * hands out and takes their tokens as any node would.
 */
async function makeLogins(n: number): Promise<number[]> {
  const ns = Array.from({ length: n }, () => ctx.seq.take());
  if (stack.webs.length === 0) await stack.startWebs(1);
  const url = stack.webs[0]!.url;
  const done = new CompletionCounter('inbound', stack.inboundPrefix);
  await done.start();
  await stack.startWorker();
  try {
    const regs = await runAll(n, 32, (i) => ({ url, spec: registerRequest(ns[i]!) }));
    const hooks = await runAll(n, 32, (i) => ({ url, spec: webhookRequest(ctx, ns[i]!) }));
    if (!regs.every(isOk) || !hooks.every(isOk)) throw new Error('the logins could not be set up');
    const completed = await done.waitFor(n, 120_000);
    const loggedIn = completed.outcomes['logged-in'] ?? 0;
    if (loggedIn !== n) throw new Error(`${loggedIn} of ${n} logins were completed`);
    return ns;
  } finally {
    await done.close();
    await stack.stopWorkers();
  }
}

/** SESSIONS logins collected by check-login (through the plain node): the sessions profile and refresh-token poll. */
async function signIn(): Promise<void> {
  if (sessions.length > 0) return;
  const ns = await makeLogins(SESSIONS);
  const url = stack.webs[0]!.url;
  const answers = await runAll(ns.length, 32, (i) => ({ url, spec: jsonPost('/check-login', { pin: pinFor(ns[i]!) }) }));
  for (const a of answers) {
    const pair = pairFrom(a.status, a.body);
    if (!pair) throw new Error(`a completed login was not handed out: ${a.status} ${a.body.slice(0, 200)}`);
    sessions.push(pair);
  }
}

interface Endpoint {
  name: string;
  /** runs on the node before its warm-up */
  prepare?(url: string): Promise<void>;
  /** settings of this endpoint's node beyond the benchmark stack's */
  env?: Record<string, string>;
  request(): RequestSpec;
  /** what bare Koa is sent, when the service's requests depend on its answers */
  baselineRequest?(): RequestSpec;
  onAnswer?(answer: Answer): void;
}

let profiled = 0;
/** check-login (verified): the sequence numbers of completed, uncollected logins */
const verified: number[] = [];
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
  {
    // each request collects one login: as many completed beforehand as the warm-up and the count take
    name: 'check-login (verified)',
    prepare: async () => {
      verified.push(...(await makeLogins(warmup + requests)));
    },
    request: () => {
      const n = verified.shift();
      if (n === undefined) throw new Error('check-login (verified): more requests than completed logins');
      return jsonPost('/check-login', { pin: pinFor(n) });
    },
    baselineRequest: () => jsonPost('/check-login', { pin: pinFor(pending[0]!) }),
  },
  { name: 'profile', prepare: signIn, request: () => profileRequest(sessions[profiled++ % sessions.length]!.token) },
  {
    name: 'refresh-token',
    prepare: async () => {
      await signIn();
      refreshPool.push(...sessions);
    },
    request: () => refreshRequest(refreshPool.shift() ?? { token: 'pool-empty', refreshToken: 'pool-empty' }),
    baselineRequest: () => refreshRequest(sessions[profiled++ % sessions.length]!),
    onAnswer: (a) => {
      const next = pairFrom(a.status, a.body);
      if (next) refreshPool.push(next);
    },
  },
  { name: 'webhook', request: () => webhookRequest(ctx, ctx.seq.take()) },
];

/** A node's dump file, one per counted node (the `.1` file is the one switched on and dumped by hand). */
let dumps = 0;
const dumpFile = (): string => path.join(os.tmpdir(), `pin-auth-callgrind-${process.pid}-${++dumps}`);
const callgrind = (out: string): string[] => ['valgrind', '--tool=callgrind', '--smc-check=all', '--instr-atstart=no', `--callgrind-out-file=${out}`];

interface Counting {
  label: string;
  /** run on the started node before its warm-up (waiting until it answers, preparing data) */
  before?(): Promise<void>;
  request(): RequestSpec;
  onAnswer?(answer: Answer): void;
}

/**
 * Warms a node under callgrind up, then counts `requests` more: instructions per request and
 * the compiler's and collector's parts. Every counted request must succeed. The node is stopped
 * and its dump removed whatever happens.
 */
async function count(child: Child, out: string, { label, before, request, onAnswer }: Counting): Promise<Counted> {
  const make = (): { url: string; spec: RequestSpec } => ({ url: child.url, spec: request() });
  try {
    await before?.();
    log(`${label}: ${warmup} requests of warm-up, then ${requests} counted`);
    await runAll(warmup, 16, make, onAnswer);
    execFileSync('callgrind_control', ['--instr=on', String(child.pid)], { stdio: 'ignore' });
    const answered = await runAll(requests, 16, make, onAnswer);
    execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
    const failed = answered.filter((a) => !isOk(a));
    if (failed.length > 0) {
      throw new Error(`${label}: ${failed.length} of ${requests} requests failed (e.g. ${failed[0]!.status} ${failed[0]!.body.slice(0, 200)})`);
    }
    const counted = countCallgrind(`${out}.1`);
    return { total: counted.total / requests, compiler: counted.compiler / requests, gc: counted.gc / requests };
  } finally {
    await stopChild(child);
    rmSync(out, { force: true });
    rmSync(`${out}.1`, { force: true });
  }
}

const thousands = (n: number): string => Math.round(n).toLocaleString('en-US');
const share = (part: number, whole: number): string => `${((100 * part) / whole).toFixed(1)} %`;
/** what a count is read as: everything but V8's compiler */
const work = (c: Counted): number => c.total - c.compiler;

const rows: string[][] = [];
try {
  const web = procfileScript('web');
  for (const endpoint of endpoints.filter((e) => e.name.includes(only))) {
    const port = await freePort();
    const out = dumpFile();
    // Under callgrind V8 compiles on the main thread and the event loop can stall for seconds; a
    // Redis reply waiting behind the stall would meet the 2 s command timeout first (503). The
    // retry windows stay longer than the timeout (else a warning at start); they only set keys' lifetimes.
    const env = {
      ...stack.serviceEnv('web-callgrind', port),
      REDIS_COMMAND_TIMEOUT_MS: '60000',
      COLLECT_RETRY_SECONDS: '120',
      REFRESH_REUSE_SECONDS: '120',
      ...endpoint.env,
    };
    const child = spawnNode('web-callgrind', web.script, env, [...web.nodeArgs, '--single-threaded'], port, callgrind(out));
    const service = await count(child, out, {
      label: endpoint.name,
      before: async () => {
        await waitUntil(child, () => answers(`${child.url}/health`), 180_000);
        await endpoint.prepare?.(child.url);
      },
      request: endpoint.request,
      onAnswer: endpoint.onAnswer,
    });
    // bare Koa as the benchmark starts it (no flags), same requests, same warm-up
    const baseOut = dumpFile();
    const baseline = await startBaseline({ nodeArgs: ['--single-threaded'], wrap: callgrind(baseOut), readyTimeoutMs: 180_000 });
    const base = await count(baseline, baseOut, { label: `${endpoint.name}, bare Koa`, request: endpoint.baselineRequest ?? endpoint.request });
    rows.push([
      endpoint.name,
      thousands(work(service)),
      share(service.gc, work(service)),
      `${thousands(service.compiler)} (${share(service.compiler, service.total)})`,
      thousands(work(base)),
      (work(service) / work(base)).toFixed(2),
      String(requests),
    ]);
  }
  process.stdout.write(`\nInstructions per request, one node under callgrind (user space, --single-threaded, after ${warmup.toLocaleString('en-US')} requests of warm-up)\n`);
  process.stdout.write(`${textTable(['endpoint', 'instructions / request', 'of which GC', "V8's compiler, left out", 'bare Koa', 'ratio', 'requests counted'], rows)}\n`);
  process.stdout.write(
    "V8's optimising compiler is left out of each count: at full speed it runs once and is spread over millions of requests; under callgrind's\n" +
      'fifty-fold slowdown each timer and each rare event that sends a function back to be compiled again lands on a few hundred requests.\n',
  );
} finally {
  closeAgent();
  await stack.stop();
}
