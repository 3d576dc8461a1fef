import type { Socket } from 'socket.io-client';
import { registerRequest, webhookRequest, type BenchContext } from '../context.js';
import { isOk, runAll, send } from '../load.js';
import { emojiFor, pinFor } from '../payloads.js';
import { cpuMs } from '../processes.js';
import { benchRedis, CompletionCounter, redisCpuMs, type JobStages } from '../redis.js';
import { closeAll, connectAll, inBatches, registerPin } from '../sockets.js';
import { now, round, sleep, summarise, type LatencySummary } from '../stats.js';

/**
 * End-to-end login: clients registered on sockets over both web nodes; their chat messages
 * posted at a fixed rate (open loop: the rate does not slow down when the service does), each
 * to the other node than its socket's; latency from the webhook POST to `auth-success` at the
 * client. Then the most logins one worker sustains: N logins queued while no worker runs, one
 * worker started, the time from its first completed job to its last.
 */
export interface LoginFigures {
  latency: LatencySummary & {
    rate: number;
    achievedRate: number;
    clients: number;
    /** webhooks sent in the first seconds, left out of p50/p99/max (still counted as missing if lost) */
    warmup: number;
    missing: number;
    webhookFailures: number;
    /** the refused webhooks by status (0: no answer) */
    failureStatuses: Record<string, number>;
    /** worker CPU ms per login at this rate */
    workerCpuPerLogin: number;
    /** p50 and max of each second of the run, by when the webhook was sent: shows transients */
    bySecond: Array<{ second: number; p50: number; max: number }>;
    /** latency of the first and the last webhook fired (a rising figure means a growing queue) */
    first: number;
    last: number;
    /** where the time went, from BullMQ's job timestamps */
    stages: JobStages;
  };
  worker: { logins: number; accepted: number; loggedIn: number; cpuPerLogin: number; redisCpuPerLogin: number; perSecond: number; perSecondWithStart: number; seconds: number; lost: number };
}

export async function login(ctx: BenchContext): Promise<LoginFigures> {
  return { latency: await socketLatency(ctx), worker: await workerThroughput(ctx) };
}

async function socketLatency(ctx: BenchContext): Promise<LoginFigures['latency']> {
  const { stack, sizes, seq } = ctx;
  if (!stack.worker) await stack.startWorker();
  const urls = stack.urls;
  const count = sizes.loginRate * sizes.loginSeconds;
  ctx.log(`login: ${count} socket clients over ${urls.length} nodes, webhooks at ${sizes.loginRate}/s`);
  const sockets: Socket[] = await connectAll(urls, count);
  try {
    const ns = Array.from({ length: count }, () => seq.take());
    await inBatches(count, 100, (i) => registerPin(sockets[i]!, pinFor(ns[i]!), emojiFor(ns[i]!)));

    const sentAt = new Float64Array(count).fill(NaN);
    const latencies: number[] = [];
    const byClient = new Float64Array(count).fill(NaN);
    const warmupMs = sizes.warmupSeconds * 1000;
    let t0 = Infinity;
    let received = 0;
    let allReceived: () => void = () => undefined;
    const everyone = new Promise<void>((resolve) => (allReceived = resolve));
    sockets.forEach((socket, i) =>
      socket.once('auth-success', () => {
        byClient[i] = now() - sentAt[i]!;
        // the first seconds warm the path up (JIT, connections, buffers): steady state is the figure
        if (sentAt[i]! - t0 >= warmupMs) latencies.push(byClient[i]!);
        if (++received === count) allReceived();
      }),
    );

    let webhookFailures = 0;
    const failureStatuses: Record<string, number> = {};
    const requests = ns.map((n) => webhookRequest(ctx, n));
    const interval = 1000 / sizes.loginRate;
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
          // the socket of client i is on urls[i % n]; its chat message arrives at the next node
          void send(urls[(i + 1) % urls.length]!, requests[i]!, () => (sentAt[i] = lastSent = now())).then((a) => {
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
    const workerCpu = cpuMs(worker.pid) - cpuBefore;
    return {
      ...summarise(latencies),
      rate: sizes.loginRate,
      achievedRate: round((count - 1) / ((lastSent - t0) / 1000)),
      clients: count,
      warmup: count - latencies.length - (count - received),
      missing: count - received,
      webhookFailures,
      failureStatuses,
      workerCpuPerLogin: round(workerCpu / Math.max(1, received), 3),
      bySecond: perSecond(sentAt, byClient, t0),
      first: round(byClient[0]!, 2),
      last: round(byClient[count - 1]!, 2),
      stages: await stack.inbound.stages(wallStart, count + 100),
    };
  } finally {
    closeAll(sockets);
  }
}

function perSecond(sentAt: Float64Array, latency: Float64Array, t0: number): LoginFigures['latency']['bySecond'] {
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

async function workerThroughput(ctx: BenchContext): Promise<LoginFigures['worker']> {
  const { stack, sizes, seq } = ctx;
  const n = sizes.workerLogins;
  const urls = stack.urls;
  await stack.stopWorker();
  ctx.log(`login: ${n} registrations and their webhooks queued with no worker running`);
  const ns = Array.from({ length: n }, () => seq.take());
  const regs = await runAll(n, 32, (i) => ({ url: urls[i % urls.length]!, spec: registerRequest(ns[i]!) }));
  const hooks = await runAll(n, 32, (i) => ({ url: urls[i % urls.length]!, spec: webhookRequest(ctx, ns[i]!) }));
  const registered = regs.filter(isOk).length;
  const accepted = hooks.filter(isOk).length;
  if (registered !== n || accepted !== n) ctx.log(`login: only ${registered} registered, ${accepted} webhooks accepted of ${n}`);

  const counter = new CompletionCounter('inbound', stack.bullPrefix);
  await counter.start();
  const started = now();
  const worker = await stack.startWorker();
  const redis = benchRedis();
  const cpuAtStart = cpuMs(worker.pid);
  const redisAtStart = await redisCpuMs(redis);
  const doneAtStart = counter.snapshot().distinct;
  const done = await counter.waitFor(accepted, sizes.drainTimeoutMs);
  const cpu = cpuMs(worker.pid) - cpuAtStart;
  const redisCpu = (await redisCpuMs(redis)) - redisAtStart;
  redis.disconnect();
  await counter.close();
  const loggedIn = done.outcomes['logged-in'] ?? 0;
  const span = (done.lastAt - done.firstAt) / 1000;
  return {
    logins: n,
    accepted,
    loggedIn,
    cpuPerLogin: round(cpu / Math.max(1, done.distinct - doneAtStart), 3),
    // every process's Redis work in that time, not only this worker's: noisy on a shared Redis
    redisCpuPerLogin: round(redisCpu / Math.max(1, done.distinct - doneAtStart), 3),
    perSecond: round(loggedIn / span),
    perSecondWithStart: round(loggedIn / ((done.lastAt - started) / 1000)),
    seconds: round(span, 2),
    // every accepted chat message quoted a pending registration: each must have logged in
    lost: Math.max(0, accepted - loggedIn),
  };
}
