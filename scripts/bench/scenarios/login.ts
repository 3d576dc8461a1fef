import type { BenchContext } from '../context.js';
import { queueLogins } from '../logins.js';
import { openLoop, SocketPool, type LoginPath, type OpenLoopStep } from '../open-loop.js';
import { cpuMs, type Child } from '../processes.js';
import { benchRedis, redisCommands, redisCpuMs, workerTally, type LoginLegs } from '../redis.js';
import { now, round, summarise } from '../stats.js';
import { keys } from '../../../src/redis/keys.js';

/**
 * End-to-end login, as two curves:
 * - latency against offered load, the way a person waits (open-loop.ts), each step's logins split
 *   into their legs (LoginLegs). The rate steps up until the service saturates (it falls behind
 *   the rate, or p99 passes a second).
 * - logins/s against worker processes (1, 2, 4 on one Redis): N logins queued on a held queue,
 *   the workers started and ready, the queue released; from the release until no job waits or
 *   runs (the queue's counts polled every 5 ms: a reader of BullMQ's event stream beside the
 *   drain took a tenth of its rate on two cores), the outcomes then read from the workers' own
 *   counters (their last metrics snapshot).
 *   Each count drains its backlog `workerRepeats` times and reports the median drain, with every
 *   drain's rate beside it: on a shared 2-core VM one drain of a few seconds read anywhere from
 *   2,000 to 4,000 logins/s for the same code.
 */
export interface LatencyPoint extends OpenLoopStep {
  /** p50 and max of each second of the step, by when the webhook was sent: shows transients */
  bySecond: Array<{ second: number; p50: number; max: number }>;
  /** latency of the first and the last webhook fired (a rising figure means a growing queue) */
  first: number;
  last: number;
  /** where the time went (the measured logins: warm-up left out) */
  legs: LoginLegs;
  saturated: boolean;
}

export interface WorkerPoint {
  workers: number;
  logins: number;
  accepted: number;
  loggedIn: number;
  /** worker CPU ms per login (all workers), and Redis CPU ms per login (the whole server) */
  cpuPerLogin: number;
  redisCpuPerLogin: number;
  /** Redis commands per login (INFO commandstats: script calls and the commands inside them; the whole server) */
  redisCommandsPerLogin: number;
  perSecond: number;
  seconds: number;
  lost: number;
  /** logins/s of every drain at this count, in run order (the point's figures are the median one's) */
  runs: number[];
}

export interface LoginFigures {
  latency: LatencyPoint[];
  /** the highest offered rate served without saturating */
  sustainedRate: number | null;
  workers: WorkerPoint[];
}

/** past this p99 (ms), or below 90 % of the offered rate, a step counts as saturated */
const SATURATED_P99_MS = 1000;

export async function login(ctx: BenchContext): Promise<LoginFigures> {
  const latency = await latencyCurve(ctx);
  const ok = latency.filter((p) => !p.saturated);
  return { latency, sustainedRate: ok.length ? ok[ok.length - 1]!.rate : null, workers: await workerCurve(ctx) };
}

/** The service as a login path: sockets on web-1, webhooks to web-2, its one worker. */
export function servicePath(ctx: BenchContext): LoginPath {
  const { stack } = ctx;
  return {
    name: 'service',
    socketUrl: stack.urls[0]!,
    // the sockets are on web-1; the chat messages arrive at the other node
    webhookUrl: stack.urls[stack.urls.length > 1 ? 1 : 0]!,
    workerPid: stack.worker!.pid,
    socketPid: stack.webs[0]!.pid,
    webhookPid: stack.webs[stack.webs.length > 1 ? 1 : 0]!.pid,
    idle: (timeoutMs) => stack.inbound.idle(timeoutMs),
  };
}

async function latencyCurve(ctx: BenchContext): Promise<LatencyPoint[]> {
  const { stack, sizes } = ctx;
  await stack.stopWorkers();
  await stack.startWorker();
  ctx.log(`login: sockets on web-1; webhooks to the other node at ${sizes.loginRates.join(', ')}/s, ${sizes.loginSeconds} s each`);
  const pool = new SocketPool(stack.urls[0]!);
  const points: LatencyPoint[] = [];
  try {
    for (const rate of sizes.loginRates) {
      const point = await latencyStep(ctx, pool, rate);
      points.push(point);
      ctx.log(`login: ${rate}/s → p50 ${point.p50} ms, p99 ${point.p99} ms${point.saturated ? ' (saturated)' : ''}`);
      if (point.saturated) break;
      // whatever the step left queued is done before the next one starts
      await stack.inbound.drained(sizes.drainTimeoutMs);
    }
  } finally {
    pool.close();
  }
  return points;
}

async function latencyStep(ctx: BenchContext, pool: SocketPool, rate: number): Promise<LatencyPoint> {
  const run = await openLoop(ctx, servicePath(ctx), pool, rate, ctx.sizes.loginSeconds, ctx.sizes.loginWarmupSeconds);
  const { step, sentAt, byClient, t0, warmupMs, index } = run;
  // a worker announces a login before BullMQ marks its job finished: the legs are read once every job of the step is
  await ctx.stack.inbound.idle(ctx.sizes.drainTimeoutMs);
  return {
    ...step,
    bySecond: perSecond(sentAt, byClient, t0),
    first: round(byClient[0]!, 2),
    last: round(byClient[byClient.length - 1]!, 2),
    legs: await ctx.stack.inbound.legs(run.wallStart, step.clients + 100, (phone) => {
      const i = index.get(phone);
      // wall clock of the send and the arrival; warm-up and lost logins are left out
      if (i === undefined || Number.isNaN(byClient[i]!) || sentAt[i]! - t0 < warmupMs) return undefined;
      return { sent: performance.timeOrigin + sentAt[i]!, event: performance.timeOrigin + sentAt[i]! + byClient[i]! };
    }),
    saturated: step.missing > 0 || step.webhookFailures > 0 || step.achievedRate < 0.9 * rate || !(step.p99 <= SATURATED_P99_MS),
  };
}

function perSecond(sentAt: Float64Array, latency: Float64Array, t0: number): LatencyPoint['bySecond'] {
  const buckets: number[][] = [];
  sentAt.forEach((t, i) => {
    if (Number.isNaN(latency[i]!)) return;
    const second = Math.floor((t - t0) / 1000);
    buckets[second] ??= [];
    buckets[second].push(latency[i]!);
  });
  return buckets.map((b, second) => {
    const s = summarise(b);
    return { second, p50: s.p50, max: s.max };
  });
}

async function workerCurve(ctx: BenchContext): Promise<WorkerPoint[]> {
  const points: WorkerPoint[] = [];
  for (const count of ctx.sizes.workerCounts) {
    const drains: Omit<WorkerPoint, 'runs'>[] = [];
    for (let r = 0; r < Math.max(1, ctx.sizes.workerRepeats); r++) drains.push(await workerThroughput(ctx, count));
    const median = [...drains].sort((a, b) => a.perSecond - b.perSecond)[Math.floor((drains.length - 1) / 2)]!;
    // every drain must have lost nothing, not only the median one
    const point = { ...median, lost: drains.reduce((a, d) => a + d.lost, 0), runs: drains.map((d) => d.perSecond) };
    points.push(point);
    ctx.log(`login: ${count} worker(s) → ${point.perSecond} logins/s (median of ${point.runs.join(', ')})`);
  }
  return points;
}

/** N logins waiting on the held queue, `count` workers started and ready, then the queue released. */
async function workerThroughput(ctx: BenchContext, count: number): Promise<Omit<WorkerPoint, 'runs'>> {
  const { stack, sizes } = ctx;
  const n = sizes.workerLogins;
  await stack.stopWorkers();
  ctx.log(`login: ${n} logins queued for ${count} worker(s)`);
  const { accepted } = await queueLogins(ctx, n);
  await stack.inbound.pause();
  let workers: Child[];
  try {
    workers = await stack.startWorkers(count);
  } catch (err) {
    await stack.inbound.resume();
    throw err;
  }
  const redis = benchRedis();
  const cpuAtStart = workers.reduce((a, w) => a + cpuMs(w.pid), 0);
  const redisAtStart = await redisCpuMs(redis);
  const commandsAtStart = await redisCommands(redis);
  const startedAt = now();
  await stack.inbound.resume();
  // No reader on BullMQ's event stream while the clock runs: on two cores it took a tenth of
  // the drain's rate. The queue's counts are polled instead, and the outcomes come afterwards
  // from the workers' own counters.
  await stack.inbound.idle(sizes.drainTimeoutMs);
  const span = (now() - startedAt) / 1000;
  const cpu = workers.reduce((a, w) => a + cpuMs(w.pid), 0) - cpuAtStart;
  const redisCpu = (await redisCpuMs(redis)) - redisAtStart;
  const commands = (await redisCommands(redis)) - commandsAtStart;
  // a worker writes its last metrics snapshot as it stops
  await stack.stopWorkers();
  const tally = await workerTally(
    redis,
    keys(stack.prefix).metricsNodes(),
    workers.map((w) => stack.instanceName(w.name)),
  );
  redis.disconnect();
  const loggedIn = tally.outcomes['logged-in'] ?? 0;
  const jobs = Math.max(1, tally.jobs.completed ?? 0);
  return {
    workers: count,
    logins: n,
    accepted,
    loggedIn,
    cpuPerLogin: round(cpu / jobs, 3),
    // every process's Redis work in that time, not only the workers': noisy on a shared Redis
    redisCpuPerLogin: round(redisCpu / jobs, 3),
    redisCommandsPerLogin: round(commands / jobs, 1),
    perSecond: round(loggedIn / span),
    seconds: round(span, 2),
    // every accepted chat message quoted a pending registration: each must have logged in
    lost: Math.max(0, accepted - loggedIn),
  };
}
