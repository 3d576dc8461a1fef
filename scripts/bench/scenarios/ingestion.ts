import { paired, type Compared } from '../baseline.js';
import { webhookRequest, type BenchContext } from '../context.js';
import type { RequestSpec } from '../load.js';
import { cpuMs } from '../processes.js';
import { CompletionCounter } from '../redis.js';
import { now, round } from '../stats.js';

/**
 * Webhook ingestion beside a bare Koa baseline, alternating in one run, with the workers stopped
 * so the burst waits in Redis; then one worker drains the backlog, and every accepted webhook
 * must have become exactly one completed job.
 */
export interface IngestionFigures extends Compared {
  /** CPU ms each process spent per request or job: comparable even when the machine is busy */
  cpuPerRequest: { baseline: number; web: number; workerPerJob: number };
  accepted: number;
  refused: number;
  backlog: number;
  drain: { jobs: number; jobsPerSecond: number; jobsPerSecondWithStart: number; seconds: number };
  completed: number;
  /** completed jobs whose answer the client never saw (cut off at the end of a timed blast) */
  unanswered: number;
  repeats: number;
  failed: number;
  lost: number;
}

export async function ingestion(ctx: BenchContext): Promise<IngestionFigures> {
  const { stack, sizes, seq } = ctx;
  await stack.stopWorkers();
  const baseline = await stack.baseline();
  const next = (): RequestSpec => webhookRequest(ctx, seq.take());
  ctx.log(`ingestion: warm-up, then ${sizes.ingestionRounds} × (baseline, service) of ${sizes.ingestionSeconds} s`);
  const run = await paired({
    baseline,
    service: stack.webs[0]!,
    baselineRequest: next,
    serviceRequest: next,
    rounds: sizes.ingestionRounds,
    seconds: sizes.ingestionSeconds,
    warmupSeconds: sizes.warmupSeconds,
    connections: sizes.connections,
  });
  const accepted = (run.serviceWarmup?.ok ?? 0) + run.service.ok;
  const refused = (run.serviceWarmup?.failed ?? 0) + run.service.failed;
  // waiting in Redis, on the queue
  const backlog = (await stack.inbound.counts()).waiting ?? 0;

  ctx.log(`ingestion: ${accepted} accepted, ${backlog} waiting; starting one worker to drain`);
  const counter = new CompletionCounter('inbound', stack.inboundPrefix);
  await counter.start();
  const started = now();
  const worker = await stack.startWorker();
  // CPU per job counted from the moment it serves (start-up excluded)
  const cpuAtStart = cpuMs(worker.pid);
  const doneAtStart = counter.snapshot().distinct;
  // the backlog can exceed the 2xx count: answers still in flight when a timed blast stops
  // were accepted by the service but never counted by the client
  const done = await counter.waitFor(Math.max(accepted, backlog), sizes.drainTimeoutMs);
  const workerCpu = cpuMs(worker.pid) - cpuAtStart;
  await counter.close();
  const counts = await stack.inbound.counts();
  const span = (done.lastAt - done.firstAt) / 1000;

  return {
    baseline: run.baseline,
    service: run.service,
    ratio: run.ratio,
    ratioRange: run.ratioRange,
    p99Ratio: run.p99Ratio,
    cpuRatio: run.cpuRatio,
    sumCpuRatio: run.sumCpuRatio,
    cpuPerRequest: {
      baseline: run.baseline.cpuPerRequest,
      web: run.service.cpuPerRequest,
      workerPerJob: round(workerCpu / Math.max(1, done.distinct - doneAtStart), 3),
    },
    accepted,
    refused,
    backlog,
    drain: {
      jobs: done.distinct,
      jobsPerSecond: round(done.distinct / span),
      jobsPerSecondWithStart: round(done.distinct / ((done.lastAt - started) / 1000)),
      seconds: round(span, 2),
    },
    completed: done.distinct,
    unanswered: Math.max(0, done.distinct - accepted),
    repeats: done.repeats,
    failed: counts.failed ?? 0,
    lost: Math.max(0, accepted - done.distinct),
  };
}
