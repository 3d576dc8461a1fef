import type { Redis } from 'ioredis';
import { blast, type BlastResult, type RequestSpec } from './load.js';
import { answers, freePort, metered, spawnNode, stopChild, waitUntil, type Child } from './processes.js';
import { benchRedis, redisCpuMs } from './redis.js';
import { median, round } from './stats.js';

/**
 * The bare Koa baseline (baseline-server.ts) as a child process, and the paired measurement
 * every ratio of the benchmark comes from: baseline and service alternate in rounds of the same
 * length, load and request shape, so whatever else the machine does hits both alike; the ratio
 * is the median of the rounds' ratios (one disturbed round does not move it).
 */
export async function startBaseline(opts: { nodeArgs?: string[] } = {}): Promise<Child> {
  const port = await freePort();
  const baseline = spawnNode('baseline', 'dist/scripts/bench/baseline-server.js', { NODE_ENV: 'production', PORT: String(port) }, opts.nodeArgs ?? [], port);
  try {
    await waitUntil(baseline, () => answers(baseline.url));
  } catch (err) {
    // not left running when it never answered (waitUntil gives up on a live process too)
    await stopChild(baseline);
    throw err;
  }
  return baseline;
}

export { stopChild as stopBaseline };

export interface Side {
  /** medians over the rounds */
  rps: number;
  p50: number;
  p99: number;
  /** CPU ms the process used per answered request, over all rounds */
  cpuPerRequest: number;
  /** CPU ms the load generator (this process) used per answered request: it parses every answer's headers and body */
  loadCpuPerRequest: number;
  /** Redis's CPU ms per answered request (INFO cpu around each round; null for the baseline, which has none) */
  redisCpuPerRequest: number | null;
  ok: number;
  failed: number;
  rounds: BlastResult[];
}

export interface Paired {
  baseline: Side;
  service: Side;
  /** median over rounds of service req/s ÷ baseline req/s */
  ratio: number;
  /** the lowest and highest of the rounds' req/s ratios: how far one round strays from the median */
  ratioRange: [number, number];
  /** median over rounds of service p99 ÷ baseline p99 */
  p99Ratio: number;
  /** service CPU ÷ baseline CPU per answered request: steadier than req/s on a shared machine
   * (null when the baseline's rounds were too short for a clock tick of CPU) */
  cpuRatio: number | null;
  /**
   * all three processes' CPU per request, service (web node + Redis + load generator) ÷ baseline
   * (bare Koa + load generator): on two busy cores the req/s ratio follows its inverse
   */
  sumCpuRatio: number | null;
  /** the service's warm-up blast (its requests count too, e.g. as accepted webhooks) */
  serviceWarmup: BlastResult | null;
}

/** What a figure compared with the baseline reports (the paired run without its warm-up). */
export type Compared = Pick<Paired, 'baseline' | 'service' | 'ratio' | 'ratioRange' | 'p99Ratio' | 'cpuRatio' | 'sumCpuRatio'>;

export interface PairedRun {
  baseline: Child;
  service: Child;
  /** a request for the baseline and one for the service (the same shape; the service's may carry state) */
  baselineRequest: () => RequestSpec;
  serviceRequest: () => RequestSpec;
  rounds: number;
  /** each round lasts `seconds`, or (state used up per request) answers `amount` requests */
  seconds: number;
  amount?: number;
  warmupSeconds: number;
  /** warm-up by count instead of seconds (state used up per request) */
  warmupAmount?: number;
  connections: number;
  /** the service's answers (status, body) */
  onServiceBody?: (status: number, body: string) => void;
  /**
   * hand onServiceBody the warm-up's answers only: reading an answer (autocannon's header object,
   * the body's parse) is the load generator's work on the same two cores, which the baseline's
   * rounds do not do, so timed rounds that need no body leave it out
   */
  bodiesFromWarmupOnly?: boolean;
}

export async function paired(run: PairedRun): Promise<Paired> {
  const load = run.amount !== undefined ? { connections: run.connections, amount: run.amount } : { connections: run.connections, seconds: run.seconds };
  const serviceLoad = run.onServiceBody && run.bodiesFromWarmupOnly !== true ? { ...load, onBody: run.onServiceBody } : load;
  let serviceWarmup: BlastResult | null = null;
  if (run.warmupSeconds > 0 || run.warmupAmount !== undefined) {
    const warm =
      run.warmupAmount !== undefined
        ? { connections: run.connections, amount: run.warmupAmount }
        : { connections: run.connections, seconds: run.warmupSeconds };
    await blast(run.baseline.url, run.baselineRequest, warm);
    serviceWarmup = await blast(run.service.url, run.serviceRequest, run.onServiceBody ? { ...warm, onBody: run.onServiceBody } : warm);
  }
  const baseCpu: Cpu = { ms: 0, load: 0, redis: null };
  const svcCpu: Cpu = { ms: 0, load: 0, redis: 0 };
  const base: BlastResult[] = [];
  const svc: BlastResult[] = [];
  // the service's Redis, whose CPU is read around each service round (bare Koa has none)
  const redis = benchRedis();
  try {
    for (let r = 0; r < run.rounds; r++) {
      base.push(await measured(run.baseline.pid, baseCpu, undefined, () => blast(run.baseline.url, run.baselineRequest, load)));
      svc.push(await measured(run.service.pid, svcCpu, redis, () => blast(run.service.url, run.serviceRequest, serviceLoad)));
    }
  } finally {
    redis.disconnect();
  }
  const ratios = svc.map((s, i) => s.rps / base[i]!.rps);
  const baseline = side(base, baseCpu);
  const service = side(svc, svcCpu);
  return {
    baseline,
    service,
    ratio: round(median(ratios), 2),
    ratioRange: [round(Math.min(...ratios), 2), round(Math.max(...ratios), 2)],
    p99Ratio: round(median(svc.map((s, i) => s.latency.p99 / base[i]!.latency.p99)), 2),
    cpuRatio: baseline.cpuPerRequest > 0 ? round(service.cpuPerRequest / baseline.cpuPerRequest, 2) : null,
    sumCpuRatio: cpuSum(baseline) > 0 && service.redisCpuPerRequest !== null ? round(cpuSum(service) / cpuSum(baseline), 2) : null,
    serviceWarmup,
  };
}

/** CPU ms per request of every process on a side: its server, Redis (the service's) and the load generator. */
export const cpuSum = (s: Side): number => s.cpuPerRequest + (s.redisCpuPerRequest ?? 0) + s.loadCpuPerRequest;

/** CPU ms over a side's rounds: its server process, the load generator, and Redis (null: not read) */
interface Cpu {
  ms: number;
  load: number;
  redis: number | null;
}

/** One round, with the CPU each process used during it added to `into`. */
async function measured<T>(pid: number, into: Cpu, redis: Redis | undefined, fn: () => Promise<T>): Promise<T> {
  const redisBefore = redis ? await redisCpuMs(redis) : 0;
  const loadBefore = process.cpuUsage();
  try {
    return await metered(pid, into, fn);
  } finally {
    const load = process.cpuUsage(loadBefore);
    into.load += (load.user + load.system) / 1000;
    if (redis && into.redis !== null) into.redis += (await redisCpuMs(redis)) - redisBefore;
  }
}

function side(rounds: BlastResult[], cpu: Cpu): Side {
  const ok = rounds.reduce((a, r) => a + r.ok, 0);
  const per = (ms: number): number => round(ms / Math.max(1, ok), 3);
  return {
    rps: round(median(rounds.map((r) => r.rps))),
    p50: round(median(rounds.map((r) => r.latency.p50)), 2),
    p99: round(median(rounds.map((r) => r.latency.p99)), 2),
    cpuPerRequest: per(cpu.ms),
    loadCpuPerRequest: per(cpu.load),
    redisCpuPerRequest: cpu.redis === null ? null : per(cpu.redis),
    ok,
    failed: rounds.reduce((a, r) => a + r.failed, 0),
    rounds,
  };
}
