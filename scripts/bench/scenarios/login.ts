import type { Socket } from 'socket.io-client';
import { webhookRequest, type BenchContext } from '../context.js';
import { isOk, send } from '../load.js';
import { queueLogins } from '../logins.js';
import { emojiFor, phoneFor, pinFor } from '../payloads.js';
import { cpuMs, type Child } from '../processes.js';
import { benchRedis, redisCommands, redisCpuMs, workerTally, type LoginLegs } from '../redis.js';
import { closeAll, connectAll, inBatches, registerPin } from '../sockets.js';
import { now, round, sleep, summarise, type LatencySummary } from '../stats.js';
import { instanceName } from '../stack.js';
import { keys } from '../../../src/redis/keys.js';

/**
 * End-to-end login, as two curves:
 * - latency against offered load, the way a person waits: clients registered on sockets held by
 *   web-1 (up to 16 registrations a socket, as the service allows); their chat messages posted
 *   to web-2 at a fixed rate (open loop: the rate does not slow down when the service does), so
 *   every event crosses Redis; latency from the webhook POST to `auth-success` at the client,
 *   the first part of each step left out as warm-up, and split into its legs (LoginLegs). The
 *   rate steps up until the service saturates (it falls behind the rate, or p99 passes a second).
 * - logins/s against worker processes (1, 2, 4 on one Redis): N logins queued on a held queue,
 *   the workers started and ready, the queue released; from the release until no job waits or
 *   runs (the queue's counts polled every 5 ms: a reader of BullMQ's event stream beside the
 *   drain took a tenth of its rate on two cores), the outcomes then read from the workers' own
 *   counters (their last metrics snapshot).
 *   Each count drains its backlog `workerRepeats` times and reports the median drain, with every
 *   drain's rate beside it: on a shared 2-core VM one drain of a few seconds read anywhere from
 *   2,000 to 4,000 logins/s for the same code.
 */
export interface LatencyPoint extends LatencySummary {
  rate: number;
  achievedRate: number;
  clients: number;
  /** webhooks sent in the warm-up, left out of p50/p99/max (still counted as missing if lost) */
  warmup: number;
  missing: number;
  webhookFailures: number;
  /** the refused webhooks by status (0: no answer) */
  failureStatuses: Record<string, number>;
  /** worker CPU ms per login at this rate */
  workerCpuPerLogin: number;
  /** p50 and max of each second of the step, by when the webhook was sent: shows transients */
  bySecond: Array<{ second: number; p50: number; max: number }>;
  /** latency of the first and the last webhook fired (a rising figure means a growing queue) */
  first: number;
  last: number;
  /** where the time went (the measured logins: warm-up left out) */
  legs: LoginLegs;
  /**
   * The machine's price of one hop at that moment: the load generator's own PING to the same
   * Redis every RTT_EVERY_MS during the step (warm-up left out). A login is about fourteen such
   * hops in a row (docs/benchmark.md), so this says whether a slow step was the code or the VM.
   */
  redisRtt: { p50: number; p99: number };
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

const PINS_PER_SOCKET = 16;
const RTT_EVERY_MS = 10;
/** past this p99 (ms), or below 90 % of the offered rate, a step counts as saturated */
const SATURATED_P99_MS = 1000;

export async function login(ctx: BenchContext): Promise<LoginFigures> {
  const latency = await latencyCurve(ctx);
  const ok = latency.filter((p) => !p.saturated);
  return { latency, sustainedRate: ok.length ? ok[ok.length - 1]!.rate : null, workers: await workerCurve(ctx) };
}

async function latencyCurve(ctx: BenchContext): Promise<LatencyPoint[]> {
  const { stack, sizes } = ctx;
  await stack.stopWorkers();
  await stack.startWorker();
  const most = Math.max(...sizes.loginRates) * sizes.loginSeconds;
  const socketCount = Math.ceil(most / PINS_PER_SOCKET);
  ctx.log(`login: ${socketCount} sockets on web-1; webhooks to the other node at ${sizes.loginRates.join(', ')}/s, ${sizes.loginSeconds} s each`);
  const sockets: Socket[] = await connectAll(stack.urls.slice(0, 1), socketCount);
  // auth-success carries the user, whose phone is unique to the login (phoneFor(n))
  let onSuccess: (phone: string) => void = () => undefined;
  for (const s of sockets) s.on('auth-success', (r: { user?: { phone?: string } }) => onSuccess(r.user?.phone ?? ''));
  const points: LatencyPoint[] = [];
  try {
    for (const rate of sizes.loginRates) {
      const point = await latencyStep(ctx, sockets, rate, (fn) => (onSuccess = fn));
      points.push(point);
      ctx.log(`login: ${rate}/s → p50 ${point.p50} ms, p99 ${point.p99} ms${point.saturated ? ' (saturated)' : ''}`);
      if (point.saturated) break;
      // whatever the step left queued is done before the next one starts
      await stack.inbound.drained(sizes.drainTimeoutMs);
    }
  } finally {
    closeAll(sockets);
  }
  return points;
}

async function latencyStep(ctx: BenchContext, sockets: Socket[], rate: number, listen: (fn: (phone: string) => void) => void): Promise<LatencyPoint> {
  const { stack, sizes, seq } = ctx;
  // the sockets are on web-1; the chat messages arrive at the other node
  const webhookUrl = stack.urls[stack.urls.length > 1 ? 1 : 0]!;
  const count = Math.max(2, Math.round(rate * sizes.loginSeconds));
  const ns = Array.from({ length: count }, () => seq.take());
  const socketOf = (i: number): number => i % sockets.length;
  await inBatches(count, 200, (i) => registerPin(sockets[socketOf(i)]!, pinFor(ns[i]!), emojiFor(ns[i]!)));
  const index = new Map(ns.map((n, i) => [phoneFor(n), i]));

  const sentAt = new Float64Array(count).fill(NaN);
  const latencies: number[] = [];
  const byClient = new Float64Array(count).fill(NaN);
  const warmupMs = sizes.loginWarmupSeconds * 1000;
  let t0 = Infinity;
  let received = 0;
  let allReceived: () => void = () => undefined;
  const everyone = new Promise<void>((resolve) => (allReceived = resolve));
  listen((phone) => {
    const i = index.get(phone);
    if (i === undefined || !Number.isNaN(byClient[i]!)) return;
    byClient[i] = now() - sentAt[i]!;
    // the first part warms the path up (JIT, connections, buffers): steady state is the figure
    if (sentAt[i]! - t0 >= warmupMs) latencies.push(byClient[i]!);
    if (++received === count) allReceived();
  });

  const rtts: number[] = [];
  const pinger = benchRedis();
  let pinging = true;
  const ping = async (): Promise<void> => {
    while (pinging) {
      const sent = now();
      await pinger.ping();
      if (sent - t0 >= warmupMs) rtts.push(now() - sent);
      await sleep(RTT_EVERY_MS);
    }
  };
  const pings = ping();

  let webhookFailures = 0;
  const failureStatuses: Record<string, number> = {};
  const requests = ns.map((n) => webhookRequest(ctx, n));
  const interval = 1000 / rate;
  const worker = stack.worker!;
  const cpuBefore = cpuMs(worker.pid);
  t0 = now();
  const wallStart = Date.now();
  let fired = 0;
  let lastSent = t0;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const due = Math.min(count, Math.floor((now() - t0) / interval) + 1);
      while (fired < due) {
        const i = fired++;
        void send(webhookUrl, requests[i]!, () => (sentAt[i] = lastSent = now())).then((a) => {
          if (isOk(a)) return;
          webhookFailures++;
          failureStatuses[a.status] = (failureStatuses[a.status] ?? 0) + 1;
        });
      }
      if (fired >= count) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.race([everyone, sleep(10_000)]);
  listen(() => undefined);
  pinging = false;
  await pings;
  pinger.disconnect();
  const rtt = summarise(rtts);
  const workerCpu = cpuMs(worker.pid) - cpuBefore;
  const summary = summarise(latencies);
  const achievedRate = round((count - 1) / ((lastSent - t0) / 1000));
  const missing = count - received;
  return {
    ...summary,
    rate,
    achievedRate,
    clients: count,
    warmup: count - latencies.length - missing,
    missing,
    webhookFailures,
    failureStatuses,
    workerCpuPerLogin: round(workerCpu / Math.max(1, received), 3),
    bySecond: perSecond(sentAt, byClient, t0),
    first: round(byClient[0]!, 2),
    last: round(byClient[count - 1]!, 2),
    legs: await stack.inbound.legs(wallStart, count + 100, (phone) => {
      const i = index.get(phone);
      // wall clock of the send and the arrival; warm-up and lost logins are left out
      if (i === undefined || Number.isNaN(byClient[i]!) || sentAt[i]! - t0 < warmupMs) return undefined;
      return { sent: performance.timeOrigin + sentAt[i]!, event: performance.timeOrigin + sentAt[i]! + byClient[i]! };
    }),
    redisRtt: { p50: rtt.p50, p99: rtt.p99 },
    saturated: missing > 0 || webhookFailures > 0 || achievedRate < 0.9 * rate || !(summary.p99 <= SATURATED_P99_MS),
  };
}

function perSecond(sentAt: Float64Array, latency: Float64Array, t0: number): LatencyPoint['bySecond'] {
  const buckets: number[][] = [];
  sentAt.forEach((t, i) => {
    if (Number.isNaN(latency[i]!)) return;
    (buckets[Math.floor((t - t0) / 1000)] ??= []).push(latency[i]!);
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
  const tally = await workerTally(redis, keys(stack.prefix).metricsNodes(), workers.map((w) => instanceName(w.name)));
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
