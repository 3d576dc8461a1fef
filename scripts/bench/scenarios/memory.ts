import { readFileSync } from 'node:fs';
import { jsonPost, registerRequest, type BenchContext } from '../context.js';
import { isOk, runAll } from '../load.js';
import { queueLogins } from '../logins.js';
import { pinFor } from '../payloads.js';
import { rssBytes } from '../processes.js';
import { benchRedis, CompletionCounter, prefixMemory, usedMemory } from '../redis.js';
import { closeAll, connectAll } from '../sockets.js';
import { median, round, sleep } from '../stats.js';
import type { Socket } from 'socket.io-client';

/**
 * Memory, as two curves and one figure:
 * - Redis against active registrations (register-pin over both nodes, measured at each point):
 *   INFO used_memory (the whole server) and the sum of MEMORY USAGE over the benchmark's own
 *   keys (which other tenants of a shared Redis cannot disturb), with the breakdown by key class;
 * - bytes per person and per session: M logins of new people through the worker, collected by
 *   check-login, then M more by the same people: what stays per login of each pass (every key
 *   class but the queues', the rate limits' and the registrations'); the second pass is what a
 *   session costs, the first less the second what a person does;
 * - web-1's resident memory against idle sockets (0 to 10,000), within the open-file limit.
 */
export interface RegistrationPoint {
  registrations: number;
  usedMemoryMB: number;
  /** used_memory and own keys, bytes per registration since the curve's start */
  bytesPerRegistration: number;
  /** own keys: what the key classes that grew added (queue history trimmed meanwhile, e.g. the ingestion's jobs, is not a registration's gain) */
  prefixBytesPerRegistration: number;
}

export interface SocketPoint {
  sockets: number;
  rssMB: number;
}

/**
 * The last point's sockets left idle (socketIdleSeconds), RSS read each second: a reading taken
 * just after thousands of connections still holds their handshakes' garbage, and V8 collects
 * it only once the node quietens (its memory reducer starts about 8 s in); a ping round (25 s)
 * then allocates again. The median over the window is the node's idle footprint.
 */
export interface IdleReading {
  sockets: number;
  seconds: number;
  medianMB: number;
  minMB: number;
  maxMB: number;
}

export interface MemoryFigures {
  registrations: RegistrationPoint[];
  /** where the prefix's bytes per registration go at the last point, by key class */
  breakdown: Record<string, { bytes: number; keys: number }>;
  sessions: {
    logins: number;
    /** own-key bytes a sign-in of someone known keeps once collected (the session, its index entry, the message mark, its audit event) */
    bytesPerSession: number;
    /** what a new person keeps besides: the account, phone, directory entry, the audit of the identifier linked */
    bytesPerPerson: number;
    /** by key class: the sign-ins of known people */
    breakdown: Record<string, { bytes: number; keys: number }>;
  };
  sockets: SocketPoint[];
  idle: IdleReading | null;
  /** the open-file limit of this process (each client socket is one file here and one in web-1) */
  openFileLimit: number | null;
  rss: { web1Start: number; web2: number; worker: number | null };
}

const MB = 1024 * 1024;

type ByClass = Awaited<ReturnType<typeof prefixMemory>>;

/** Bytes the classes that grew added between two readings. */
const added = (before: ByClass, after: ByClass): number => [...after].reduce((a, [c, e]) => a + Math.max(0, e.bytes - (before.get(c)?.bytes ?? 0)), 0);

function perItem(before: ByClass, after: ByClass, n: number): Record<string, { bytes: number; keys: number }> {
  const out: Record<string, { bytes: number; keys: number }> = {};
  for (const [c, a] of after) {
    const b = before.get(c) ?? { keys: 0, bytes: 0 };
    const bytes = round((a.bytes - b.bytes) / n, 1);
    if (Math.abs(bytes) >= 1) out[c] = { bytes, keys: round((a.keys - b.keys) / n, 3) };
  }
  return Object.fromEntries(Object.entries(out).sort(([, x], [, y]) => y.bytes - x.bytes));
}

/** Median of three readings a moment apart: allocator noise shows up as a lone outlier. */
async function settledUsedMemory(redis: ReturnType<typeof benchRedis>): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < 3; i++) {
    readings.push(await usedMemory(redis));
    await sleep(100);
  }
  return readings.sort((a, b) => a - b)[1]!;
}

/** `count` RSS readings of `pid`, bytes, one every `everyMs`. */
async function rssReadings(pid: number, count: number, everyMs: number): Promise<number[]> {
  const readings: number[] = [];
  for (let i = 0; i < count; i++) {
    await sleep(everyMs);
    readings.push(rssBytes(pid));
  }
  return readings;
}

/** Median of five readings over a second: a garbage collection mid-way shows up as one outlier. */
async function settledRss(pid: number): Promise<number> {
  return median(await rssReadings(pid, 5, 200));
}

/** The soft limit on open files (`ulimit -n`), from /proc. */
function openFileLimit(): number | null {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return !m ? null : m[1] === 'unlimited' ? Infinity : Number(m[1]);
}

export async function memory(ctx: BenchContext): Promise<MemoryFigures> {
  const { stack } = ctx;
  if (!stack.worker) await stack.startWorker();
  const redis = benchRedis();
  try {
    const { points, breakdown } = await registrationCurve(ctx, redis);
    const sessions = await sessionBytes(ctx, redis);
    const limit = openFileLimit();
    const { points: sockets, idle } = await socketCurve(ctx, limit);
    return {
      registrations: points,
      breakdown,
      sessions,
      sockets,
      idle,
      openFileLimit: limit === Infinity ? null : limit,
      rss: {
        web1Start: round((stack.startRss.get(stack.webs[0]!.name) ?? NaN) / MB, 1),
        web2: round(rssBytes(stack.webs[1]!.pid) / MB, 1),
        worker: stack.worker ? round(rssBytes(stack.worker.pid) / MB, 1) : null,
      },
    };
  } finally {
    redis.disconnect();
  }
}

async function registrationCurve(
  ctx: BenchContext,
  redis: ReturnType<typeof benchRedis>,
): Promise<{ points: RegistrationPoint[]; breakdown: MemoryFigures['breakdown'] }> {
  const { stack, sizes, seq } = ctx;
  const urls = stack.urls;
  ctx.log(`memory: Redis at ${sizes.registrationPoints.join(', ')} active registrations`);
  const beforePrefix = await prefixMemory(redis, stack.prefix);
  const before = await settledUsedMemory(redis);
  const points: RegistrationPoint[] = [];
  let registered = 0;
  let afterPrefix = beforePrefix;
  for (const target of sizes.registrationPoints) {
    const ns = Array.from({ length: target - registered }, () => seq.take());
    const answers = await runAll(ns.length, 64, (i) => ({ url: urls[i % urls.length]!, spec: registerRequest(ns[i]!) }));
    registered += answers.filter(isOk).length;
    const used = await settledUsedMemory(redis);
    afterPrefix = await prefixMemory(redis, stack.prefix);
    points.push({
      registrations: registered,
      usedMemoryMB: round(used / MB, 2),
      bytesPerRegistration: round((used - before) / registered),
      prefixBytesPerRegistration: round(added(beforePrefix, afterPrefix) / registered),
    });
  }
  return { points, breakdown: perItem(beforePrefix, afterPrefix, registered) };
}

async function sessionBytes(ctx: BenchContext, redis: ReturnType<typeof benchRedis>): Promise<MemoryFigures['sessions']> {
  const n = ctx.sizes.sessionLogins;
  ctx.log(`memory: ${n} logins of new people, then ${n} by the same people, collected, for the bytes a person and a session keep`);
  const first = await keptPerLogin(ctx, redis, n);
  const again = await keptPerLogin(ctx, redis, n, first.ns);
  return { logins: again.logins, bytesPerSession: round(again.kept), bytesPerPerson: round(first.kept - again.kept), breakdown: again.breakdown };
}

/** Key classes (keyClass) that a login does not keep: rate limits, registrations, and each node's metrics snapshot, health probe and cached figures. */
const NOT_PER_LOGIN = new Set(['rl', 'reg', 'active', 'metrics', 'health', 'active-figure', 'channel-health']);

/** n logins (from the phones of `people`, else of new people) through the worker, collected: the own-key bytes each keeps. */
async function keptPerLogin(ctx: BenchContext, redis: ReturnType<typeof benchRedis>, n: number, people?: readonly number[]) {
  const { stack, sizes } = ctx;
  const before = await prefixMemory(redis, stack.prefix);
  const counter = new CompletionCounter('inbound', stack.inboundPrefix);
  await counter.start();
  const { ns } = await queueLogins(ctx, n, 32, people);
  const done = await counter.waitFor(n, sizes.drainTimeoutMs);
  await counter.close();
  const url = stack.webs[0]!.url;
  await runAll(n, 32, (i) => ({ url, spec: jsonPost('/check-login', { pin: pinFor(ns[i]!) }) }));
  const after = await prefixMemory(redis, stack.prefix);
  const logins = done.outcomes['logged-in'] ?? 0;
  const breakdown = perItem(before, after, Math.max(1, logins));
  // what stays: every class of key but the queues' (bounded history), the rate limits' (gone
  // within their window), the registrations' (a collected one is kept only for check-login's
  // retry leeway; earlier scenarios' expiring meanwhile made this negative) and the nodes' own
  // state: a node's metrics snapshot is 15–20 KB, written every METRICS_INTERVAL_MS, so a fresh
  // worker's first one landing in one phase and not the other moves the per-person figure by
  // about a kilobyte (the likely cause of the -608 B the smoke's 20 logins once read)
  const kept = Object.entries(breakdown)
    .filter(([c]) => !c.startsWith('bull:') && !NOT_PER_LOGIN.has(c))
    .reduce((a, [, e]) => a + e.bytes, 0);
  return { ns, logins, kept, breakdown };
}

async function socketCurve(ctx: BenchContext, limit: number | null): Promise<{ points: SocketPoint[]; idle: IdleReading | null }> {
  const { stack, sizes } = ctx;
  const web1 = stack.webs[0]!;
  // each client socket is an open file here and one in web-1 (which inherits this limit)
  const room = limit === null ? Infinity : limit - 500;
  const wanted = sizes.socketPoints.filter((n) => n <= room);
  if (wanted.length < sizes.socketPoints.length)
    ctx.log(`memory: open-file limit ${limit}: sockets curve stops at ${wanted[wanted.length - 1]} (raise it with ulimit -n)`);
  ctx.log(`memory: web-1 RSS at ${wanted.join(', ')} idle sockets`);
  const sockets: Socket[] = [];
  const points: SocketPoint[] = [];
  try {
    for (const target of wanted) {
      sockets.push(...(await connectAll([web1.url], target - sockets.length)));
      points.push({ sockets: sockets.length, rssMB: round((await settledRss(web1.pid)) / MB, 1) });
    }
    if (sockets.length === 0) return { points, idle: null };
    const readings = (await rssReadings(web1.pid, Math.max(1, sizes.socketIdleSeconds), 1000)).map((b) => b / MB);
    const idle = {
      sockets: sockets.length,
      seconds: readings.length,
      medianMB: round(median(readings), 1),
      minMB: round(Math.min(...readings), 1),
      maxMB: round(Math.max(...readings), 1),
    };
    ctx.log(`memory: ${idle.sockets} sockets idle ${idle.seconds} s: RSS median ${idle.medianMB} MB (${idle.minMB}–${idle.maxMB})`);
    return { points, idle };
  } finally {
    closeAll(sockets);
  }
}
