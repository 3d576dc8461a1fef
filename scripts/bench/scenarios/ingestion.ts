import { webhookRequest, type BenchContext } from '../context.js';
import { blast, type BlastResult, type RequestSpec } from '../load.js';
import { answers, cpuMs, freePort, metered, spawnNode, stopChild, waitUntil } from '../processes.js';
import { CompletionCounter } from '../redis.js';
import { mean, now, round } from '../stats.js';
import { keys } from '../../../src/redis/keys.js';

/**
 * Webhook ingestion beside a bare Koa baseline, alternating in one run, with the workers stopped
 * so the burst waits in Redis; then one worker drains the backlog, and every accepted webhook
 * must have become exactly one completed job.
 */
export interface IngestionFigures {
  baseline: { rps: number; p50: number; p99: number; rounds: BlastResult[] };
  service: { rps: number; p50: number; p99: number; rounds: BlastResult[] };
  ratio: number;
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

function means(rounds: BlastResult[]) {
  return {
    rps: round(mean(rounds.map((r) => r.rps))),
    p50: round(mean(rounds.map((r) => r.latency.p50)), 2),
    p99: round(mean(rounds.map((r) => r.latency.p99)), 2),
    rounds,
  };
}

export async function ingestion(ctx: BenchContext): Promise<IngestionFigures> {
  const { stack, sizes, seq } = ctx;
  await stack.stopWorker();
  const port = await freePort();
  const baseline = spawnNode('baseline', 'dist/scripts/bench/baseline-server.js', { NODE_ENV: 'production', PORT: String(port) }, [], port);
  try {
    await waitUntil(baseline, () => answers(baseline.url));
    const next = (): RequestSpec => webhookRequest(ctx, seq.take());
    const load = { connections: sizes.connections };
    const web = stack.webs[0]!;
    const serviceUrl = web.url;
    const baseCpu = { ms: 0 };
    const webCpu = { ms: 0 };
    const onBaseline = (seconds: number) => metered(baseline.pid, baseCpu, () => blast(baseline.url, next, { ...load, seconds }));
    const onService = (seconds: number) => metered(web.pid, webCpu, () => blast(serviceUrl, next, { ...load, seconds }));

    ctx.log(`ingestion: warm-up, then ${sizes.ingestionRounds} × (baseline, service) of ${sizes.ingestionSeconds} s`);
    await blast(baseline.url, next, { ...load, seconds: sizes.warmupSeconds });
    const warm = await blast(serviceUrl, next, { ...load, seconds: sizes.warmupSeconds });
    const base: BlastResult[] = [];
    const svc: BlastResult[] = [];
    for (let r = 0; r < sizes.ingestionRounds; r++) {
      base.push(await onBaseline(sizes.ingestionSeconds));
      svc.push(await onService(sizes.ingestionSeconds));
    }
    const accepted = warm.ok + svc.reduce((a, r) => a + r.ok, 0);
    const refused = warm.failed + svc.reduce((a, r) => a + r.failed, 0);
    // waiting in Redis: in the web's intake stream, or already on the queue (the pump runs in workers)
    const backlog = ((await stack.inbound.counts()).waiting ?? 0) + (await stack.inbound.streamLength(keys(stack.prefix).inboundIntake()));

    ctx.log(`ingestion: ${accepted} accepted, ${backlog} waiting; starting one worker to drain`);
    const counter = new CompletionCounter('inbound', stack.bullPrefix);
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

    const service = means(svc);
    const baselineFigures = means(base);
    return {
      baseline: baselineFigures,
      service,
      ratio: round(service.rps / baselineFigures.rps, 2),
      cpuPerRequest: {
        baseline: round(baseCpu.ms / base.reduce((a, r) => a + r.ok, 0), 3),
        web: round(webCpu.ms / svc.reduce((a, r) => a + r.ok, 0), 3),
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
  } finally {
    await stopChild(baseline);
  }
}
