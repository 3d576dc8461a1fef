import type { Socket } from 'socket.io-client';
import { webhookRequest, type BenchContext } from './context.js';
import { isOk, send } from './load.js';
import { emojiFor, phoneFor, pinFor } from './payloads.js';
import { cpuMs } from './processes.js';
import { benchRedis, redisCpuMs } from './redis.js';
import { closeAll, connectAll, inBatches, registerPin } from './sockets.js';
import { now, round, sleep, summarise, type LatencySummary } from './stats.js';

/**
 * Logins the way a person waits, on any login path (the service, or the simplest pipeline):
 * clients registered on sockets held by the path's web-1 (up to 16 registrations a socket, as
 * the service allows), their chat messages posted to its web-2 at a fixed rate (open loop: the
 * rate does not slow down when the path does), so every event crosses Redis; latency from just
 * before the webhook is written to `auth-success` at the client, the first part of the step
 * left out as warm-up, beside a Redis round trip the load generator measures meanwhile.
 */
export interface LoginPath {
  /** 'service' or 'simplest pipeline' */
  name: string;
  /** the node the clients' sockets connect to */
  socketUrl: string;
  /** the node the webhooks go to (another one: the event crosses Redis) */
  webhookUrl: string;
  /** the one worker process, whose CPU is counted */
  workerPid: number;
  /** the node holding the sockets and the one taking the webhooks (another), whose CPU is counted too */
  socketPid: number;
  webhookPid: number;
  /** resolves once its queue has no job waiting or running */
  idle(timeoutMs: number): Promise<void>;
}

const PINS_PER_SOCKET = 16;
const RTT_EVERY_MS = 10;

/** Sockets on one node, grown as a step needs more, every `auth-success` handed to one listener. */
export class SocketPool {
  private sockets: Socket[] = [];
  private onSuccess: (phone: string) => void = () => undefined;

  constructor(private readonly url: string) {}

  /** At least enough sockets for `registrations` at PINS_PER_SOCKET each. */
  async ensure(registrations: number): Promise<Socket[]> {
    const want = Math.ceil(registrations / PINS_PER_SOCKET);
    if (want > this.sockets.length) {
      const added = await connectAll([this.url], want - this.sockets.length);
      // auth-success carries the user, whose phone is unique to the login (phoneFor(n))
      for (const s of added) s.on('auth-success', (r: { user?: { phone?: string } }) => this.onSuccess(r.user?.phone ?? ''));
      this.sockets.push(...added);
    }
    return this.sockets;
  }

  listen(fn: (phone: string) => void): void {
    this.onSuccess = fn;
  }

  /** Closes every socket (a step that lost logins leaves registrations held on them). */
  close(): void {
    closeAll(this.sockets);
    this.sockets = [];
  }
}

export interface OpenLoopStep extends LatencySummary {
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
  /**
   * CPU ms per login of every process on the two cores during the step: the worker, the web
   * node holding the sockets, the one taking the webhooks, Redis (INFO, the whole server) and the
   * load generator (this process: webhooks, sockets), and their sum; 2,000 ÷ sum is the most
   * logins/s the two cores could give
   */
  cpuPerLogin: CpuPerLogin;
  /**
   * The machine's price of one hop at that moment: the load generator's own PING to the same
   * Redis every RTT_EVERY_MS during the step (warm-up left out). A login is several such hops
   * in a row (docs/benchmark.md), so this says whether a slow step was the code or the VM.
   */
  redisRtt: { p50: number; p99: number };
}

export interface CpuPerLogin {
  worker: number;
  socketNode: number;
  webhookNode: number;
  redis: number;
  load: number;
  sum: number;
}

/** The step's figures and its raw samples (to pool rounds, or split logins into legs). */
export interface OpenLoopRun {
  step: OpenLoopStep;
  /** measured latencies (warm-up left out), and the round trips beside them, ms */
  latencies: number[];
  rtts: number[];
  workerCpuMs: number;
  received: number;
  /** per login i: when its webhook was sent (performance.now()) and its latency (NaN: lost) */
  sentAt: Float64Array;
  byClient: Float64Array;
  t0: number;
  /** Date.now() at the first webhook */
  wallStart: number;
  warmupMs: number;
  /** the login index of a phone */
  index: Map<string, number>;
}

/** `rate` logins/s for `seconds` on `path`, the first `warmupSeconds` left out of the figures. */
export async function openLoop(
  ctx: BenchContext,
  path: LoginPath,
  pool: SocketPool,
  rate: number,
  seconds: number,
  warmupSeconds: number,
): Promise<OpenLoopRun> {
  const count = Math.max(2, Math.round(rate * seconds));
  const ns = Array.from({ length: count }, () => ctx.seq.take());
  const sockets = await pool.ensure(count);
  await inBatches(count, 200, (i) => registerPin(sockets[i % sockets.length]!, pinFor(ns[i]!), emojiFor(ns[i]!)));
  const index = new Map(ns.map((n, i) => [phoneFor(n), i]));

  const sentAt = new Float64Array(count).fill(NaN);
  const latencies: number[] = [];
  const byClient = new Float64Array(count).fill(NaN);
  const warmupMs = warmupSeconds * 1000;
  let t0 = Infinity;
  let received = 0;
  let allReceived: () => void = () => undefined;
  const everyone = new Promise<void>((resolve) => (allReceived = resolve));
  pool.listen((phone) => {
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
  const cpuBefore = cpuMs(path.workerPid);
  if (path.socketPid === path.webhookPid) throw new Error(`${path.name}: the sockets and the webhooks need two web nodes`);
  const socketBefore = cpuMs(path.socketPid);
  const webhookBefore = cpuMs(path.webhookPid);
  const redisBefore = await redisCpuMs(pinger);
  const loadBefore = process.cpuUsage();
  t0 = now();
  const wallStart = Date.now();
  let fired = 0;
  let lastSent = t0;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const due = Math.min(count, Math.floor((now() - t0) / interval) + 1);
      while (fired < due) {
        const i = fired++;
        void send(path.webhookUrl, requests[i]!, () => (sentAt[i] = lastSent = now())).then((a) => {
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
  pool.listen(() => undefined);
  const workerCpuMs = cpuMs(path.workerPid) - cpuBefore;
  const socketCpuMs = cpuMs(path.socketPid) - socketBefore;
  const webhookCpuMs = cpuMs(path.webhookPid) - webhookBefore;
  const loadCpu = process.cpuUsage(loadBefore);
  const redisCpu = (await redisCpuMs(pinger)) - redisBefore;
  pinging = false;
  await pings;
  pinger.disconnect();
  const rtt = summarise(rtts);
  const missing = count - received;
  const load = (loadCpu.user + loadCpu.system) / 1000;
  const cpuPerLogin = perLogin({ worker: workerCpuMs, socketNode: socketCpuMs, webhookNode: webhookCpuMs, redis: redisCpu, load }, received);
  const step: OpenLoopStep = {
    ...summarise(latencies),
    rate,
    achievedRate: round((count - 1) / ((lastSent - t0) / 1000)),
    clients: count,
    warmup: count - latencies.length - missing,
    missing,
    webhookFailures,
    failureStatuses,
    workerCpuPerLogin: cpuPerLogin.worker,
    cpuPerLogin,
    redisRtt: { p50: rtt.p50, p99: rtt.p99 },
  };
  return { step, latencies, rtts, workerCpuMs, received, sentAt, byClient, t0, wallStart, warmupMs, index };
}

/** Each process's CPU ms over a step, per login received. */
function perLogin(ms: Omit<CpuPerLogin, 'sum'>, received: number): CpuPerLogin {
  const per = (x: number): number => round(x / Math.max(1, received), 3);
  const sum = ms.worker + ms.socketNode + ms.webhookNode + ms.redis + ms.load;
  return { worker: per(ms.worker), socketNode: per(ms.socketNode), webhookNode: per(ms.webhookNode), redis: per(ms.redis), load: per(ms.load), sum: per(sum) };
}
