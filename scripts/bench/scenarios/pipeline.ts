import type { BenchContext } from '../context.js';
import { openLoop, SocketPool, type CpuPerLogin, type LoginPath, type OpenLoopRun } from '../open-loop.js';
import type { SimplePipeline } from '../simple-baseline.js';
import { median, round, summarise } from '../stats.js';
import { servicePath } from './login.js';

/**
 * The service beside the simplest pipeline on the same libraries (simple-pipeline.ts), each with
 * two web nodes and one worker, measured alternately in the same run (service, pipeline,
 * service, pipeline…) so whatever else the machine does hits both alike:
 * - webhook → `auth-success` p50 and p99 at each of PIPELINE_RATES, open loop (open-loop.ts),
 *   `pipelineRounds` rounds of one step a side; each ratio service / pipeline is the median of
 *   the rounds' ratios (one disturbed round does not move it), each side's p50 and p99 the
 *   median of its rounds';
 * - the highest rate one worker sustains: a step is sustained when every login arrives, every
 *   webhook is accepted, the offered rate is held (≥ 95 %) and p99 ≤ SUSTAIN_P99_MS; a rate is
 *   sustained unless two steps in a row at it are not. Each side doubles its rate from
 *   `sustainStart` until a rate is not sustained (or past `sustainMax`), then bisects between its highest sustained and lowest failed rate `sustainBisections` times;
 *   the two searches take turns step by step.
 */
export const PIPELINE_RATES = [100, 200] as const;
/** a person's wait at its worst 1 %: past it, a rate is not sustained */
export const SUSTAIN_P99_MS = 250;

/** One side's figures at a rate over the rounds. */
export interface PathFigures {
  /** medians of the rounds' p50 and p99 */
  p50: number;
  p99: number;
  /** the slowest login of all rounds */
  max: number;
  /** measured logins (warm-up left out) */
  count: number;
  missing: number;
  webhookFailures: number;
  workerCpuPerLogin: number;
  /** every process's CPU per login over the rounds (open-loop.ts) */
  cpuPerLogin: CpuPerLogin;
  /** the Redis round trip meanwhile, over all rounds */
  redisRtt: { p50: number; p99: number };
  /** each round's p50 and p99 */
  rounds: Array<{ p50: number; p99: number }>;
}

export interface RateComparison {
  rate: number;
  service: PathFigures;
  pipeline: PathFigures;
  /** service ÷ pipeline: the median of the rounds' ratios */
  p50Ratio: number;
  p99Ratio: number;
  /** each round's ratios (the service's step ÷ the pipeline's step after it): how far one round strays */
  roundRatios: Array<{ p50: number; p99: number }>;
}

export interface SustainStep {
  rate: number;
  achievedRate: number;
  p50: number;
  p99: number;
  missing: number;
  webhookFailures: number;
  /** every process's CPU per login during the step (open-loop.ts) */
  cpuPerLogin: CpuPerLogin;
  sustained: boolean;
}

export interface SustainSide {
  /** the highest rate sustained (null: not even the lowest tried) */
  rate: number | null;
  /** the search reached sustainMax and no rate failed: the rate is at least this */
  capped: boolean;
  steps: SustainStep[];
}

export interface PipelineFigures {
  rates: RateComparison[];
  sustained: { p99BoundMs: number; service: SustainSide; pipeline: SustainSide /** service ÷ pipeline */; ratio: number | null };
}

interface Side {
  path: LoginPath;
  pool: SocketPool;
}

export async function pipeline(ctx: BenchContext): Promise<PipelineFigures> {
  const { stack, sizes } = ctx;
  await stack.stopWorkers();
  await stack.startWorker();
  const simple = await stack.simplePipeline();
  const service: Side = { path: servicePath(ctx), pool: new SocketPool(stack.urls[0]!) };
  const baseline: Side = { path: simplePath(simple), pool: new SocketPool(simple.urls[0]!) };
  try {
    // a fresh worker's first logins run cold code (JIT, connections): one untimed step a side first
    for (const side of [service, baseline]) await step(ctx, side, PIPELINE_RATES[0], sizes.pipelineSeconds, sizes.pipelineSeconds);
    const rates: RateComparison[] = [];
    for (const rate of PIPELINE_RATES) {
      const runs: Record<'service' | 'pipeline', OpenLoopRun[]> = { service: [], pipeline: [] };
      for (let r = 0; r < sizes.pipelineRounds; r++) {
        runs.service.push(await step(ctx, service, rate, sizes.pipelineSeconds, sizes.pipelineWarmupSeconds));
        runs.pipeline.push(await step(ctx, baseline, rate, sizes.pipelineSeconds, sizes.pipelineWarmupSeconds));
      }
      const s = overRounds(runs.service);
      const p = overRounds(runs.pipeline);
      const roundRatios = s.rounds.map((sr, i) => ({ p50: sr.p50 / p.rounds[i]!.p50, p99: sr.p99 / p.rounds[i]!.p99 }));
      const p50Ratio = round(median(roundRatios.map((r) => r.p50)), 2);
      const p99Ratio = round(median(roundRatios.map((r) => r.p99)), 2);
      rates.push({ rate, service: s, pipeline: p, p50Ratio, p99Ratio, roundRatios: roundRatios.map((r) => ({ p50: round(r.p50, 2), p99: round(r.p99, 2) })) });
      ctx.log(`pipeline: ${rate}/s → p50 ${s.p50} / ${p.p50} ms, p99 ${s.p99} / ${p.p99} ms (service / simplest pipeline)`);
    }
    const searches = {
      service: new RateSearch(sizes.sustainStart, sizes.sustainMax, sizes.sustainBisections),
      pipeline: new RateSearch(sizes.sustainStart, sizes.sustainMax, sizes.sustainBisections),
    };
    const sides = { service, pipeline: baseline };
    for (;;) {
      let stepped = false;
      for (const name of ['service', 'pipeline'] as const) {
        const rate = searches[name].next();
        if (rate === null) continue;
        stepped = true;
        const { step: s } = await step(ctx, sides[name], rate, sizes.sustainSeconds, sizes.sustainWarmupSeconds);
        const sustained = s.missing === 0 && s.webhookFailures === 0 && s.achievedRate >= 0.95 * rate && s.p99 <= SUSTAIN_P99_MS;
        searches[name].record({
          rate,
          achievedRate: s.achievedRate,
          p50: s.p50,
          p99: s.p99,
          missing: s.missing,
          webhookFailures: s.webhookFailures,
          cpuPerLogin: s.cpuPerLogin,
          sustained,
        });
        ctx.log(`pipeline: ${name} at ${rate}/s → p50 ${s.p50} ms, p99 ${s.p99} ms${sustained ? '' : ' (not sustained)'}`);
      }
      if (!stepped) break;
    }
    const sustained = { service: searches.service.result(), pipeline: searches.pipeline.result() };
    const ratio = sustained.service.rate !== null && sustained.pipeline.rate ? round(sustained.service.rate / sustained.pipeline.rate, 2) : null;
    return { rates, sustained: { p99BoundMs: SUSTAIN_P99_MS, ...sustained, ratio } };
  } finally {
    service.pool.close();
    baseline.pool.close();
  }
}

function simplePath(simple: SimplePipeline): LoginPath {
  return {
    name: 'simplest pipeline',
    socketUrl: simple.urls[0]!,
    webhookUrl: simple.urls[1]!,
    workerPid: simple.worker!.pid,
    socketPid: simple.webs[0]!.pid,
    webhookPid: simple.webs[1]!.pid,
    idle: (ms) => simple.queue.idle(ms),
  };
}

/** One open-loop step, then its queue left idle, so the other side's step starts on a quiet path. */
async function step(ctx: BenchContext, side: Side, rate: number, seconds: number, warmupSeconds: number): Promise<OpenLoopRun> {
  const run = await openLoop(ctx, side.path, side.pool, rate, seconds, warmupSeconds);
  await side.path.idle(ctx.sizes.drainTimeoutMs);
  // a lost login leaves its registration held on a socket: start the next step on fresh ones
  if (run.step.missing > 0) side.pool.close();
  return run;
}

function overRounds(runs: OpenLoopRun[]): PathFigures {
  const rtt = summarise(runs.flatMap((r) => r.rtts));
  const received = runs.reduce((a, r) => a + r.received, 0);
  return {
    p50: round(median(runs.map((r) => r.step.p50)), 2),
    p99: round(median(runs.map((r) => r.step.p99)), 2),
    max: Math.max(...runs.map((r) => r.step.max)),
    count: runs.reduce((a, r) => a + r.step.count, 0),
    missing: runs.reduce((a, r) => a + r.step.missing, 0),
    webhookFailures: runs.reduce((a, r) => a + r.step.webhookFailures, 0),
    workerCpuPerLogin: round(runs.reduce((a, r) => a + r.workerCpuMs, 0) / Math.max(1, received), 3),
    cpuPerLogin: pooledCpu(runs, received),
    redisRtt: { p50: rtt.p50, p99: rtt.p99 },
    rounds: runs.map((r) => ({ p50: r.step.p50, p99: r.step.p99 })),
  };
}

/** The rounds' CPU per login, each round weighted by the logins it received. */
function pooledCpu(runs: OpenLoopRun[], received: number): CpuPerLogin {
  const of = (k: keyof CpuPerLogin): number => round(runs.reduce((a, r) => a + r.step.cpuPerLogin[k] * r.received, 0) / Math.max(1, received), 3);
  return { worker: of('worker'), socketNode: of('socketNode'), webhookNode: of('webhookNode'), redis: of('redis'), load: of('load'), sum: of('sum') };
}

/**
 * Rates up by doubling until one fails, then bisection between the best sustained and the least
 * failed. A rate fails only when two steps in a row at it do: on a shared machine one burst of
 * other work can push a single step's p99 over the bound.
 */
class RateSearch {
  private best: number | null = null;
  private worst: number | null = null;
  private bisected = 0;
  /** a rate whose first step was not sustained, to be tried once more */
  private retry: number | null = null;
  private readonly steps: SustainStep[] = [];

  constructor(
    private readonly start: number,
    private readonly max: number,
    private readonly bisections: number,
  ) {}

  /** The next rate to try; null when the search is done. */
  next(): number | null {
    if (this.retry !== null) return this.retry;
    const { best, worst } = this;
    if (worst === null) {
      const rate = best === null ? this.start : best * 2;
      return rate > this.max ? null : rate;
    }
    // the first rate failed: halve until one is sustained (not below 10/s)
    if (best === null) return worst / 2 >= 10 ? Math.round(worst / 2) : null;
    if (this.bisected >= this.bisections) return null;
    const mid = Math.round((best + worst) / 20) * 10;
    return mid > best && mid < worst ? mid : null;
  }

  record(s: SustainStep): void {
    this.steps.push(s);
    const retried = this.retry === s.rate;
    this.retry = null;
    if (!s.sustained && !retried) {
      this.retry = s.rate;
      return;
    }
    if (this.best !== null && this.worst !== null) this.bisected++;
    if (s.sustained) this.best = Math.max(this.best ?? 0, s.rate);
    else this.worst = Math.min(this.worst ?? Infinity, s.rate);
  }

  result(): SustainSide {
    return { rate: this.best, capped: this.worst === null && this.best !== null, steps: this.steps };
  }
}
