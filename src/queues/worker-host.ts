import type { Directory } from '../accounts/directory.js';
import type { ChannelHealth } from '../messaging/health.js';
import { Worker, type Processor } from 'bullmq';
import { Cluster } from 'ioredis';
import { redisFault } from '../errors.js';
import { createSenders } from '../messaging/providers/index.js';
import { connect } from '../redis/connection.js';
import type { DeliveryTracker } from '../messaging/delivery.js';
import { Notifier, shardedEmitter } from '../realtime/notifier.js';
import { QUEUE } from './jobs.js';
import { failedForGood, inboundBackoff } from './inbound-retry.js';
import { inboundQueueName, isInbound, partitionList } from './partitions.js';
import { SendLedger } from './send-ledger.js';
import { expiryProcessor, startSafetySweep, type ExpiryServices } from './workers/expiry.js';
import { inboundProcessor, type InboundHooks, type InboundServices } from './workers/inbound.js';
import { outboundBackoff, outboundProcessor } from './workers/outbound.js';

export interface WorkerHooks extends InboundHooks {
  onExpired?: () => void;
  /** every outbound message the gateway took or refused for good (metrics) */
  onOutboundResult?: (gateway: string, result: 'sent' | 'failed', channel: string) => void;
  /** an inbound job that failed for good (nothing retries it; `npm run replay-inbound` does) */
  onInboundFailed?: () => void;
  /** a chat reply the gateway took (outbound.ts) */
  onReplySent?: (kind: string, gateway: string, number: string, country: string) => void;
  /** every finished attempt of any queue's job (metrics) */
  onJobFinished?: (queue: string, result: 'completed' | 'failed') => void;
}

/** What the workers use of the process's services (services.ts's bag has it). */
export interface WorkerServices extends InboundServices, ExpiryServices {
  /** indexed at start for the accounts made before it (backfill) */
  directory: Pick<Directory, 'index' | 'put' | 'backfill'>;
  /** delivery records the outbound worker writes */
  delivery: DeliveryTracker;
  /** where a send error meaning the number is banned takes it out of rotation */
  health: ChannelHealth;
}

export interface WorkerHost {
  workers: Worker[];
  /** Stops fetching, lets active jobs finish (bounded by the timeout), then closes. */
  close(timeoutMs: number): Promise<void>;
}

const SAFETY_SWEEP_MS = 30_000;
/** outbound jobs in flight per process, over all partitions (each waits on a gateway) */
const OUTBOUND_CONCURRENCY = 16;

/** Starts the BullMQ workers of every queue on a blocking connection of their own. */
export function startWorkers(services: WorkerServices, hooks: WorkerHooks = {}): WorkerHost {
  const { config, keys, log, redis } = services;
  const connection = connect(config.redis, 'worker', `pinauth:worker:${config.instanceName}`);
  const notifier =
    redis instanceof Cluster
      ? new Notifier(shardedEmitter(redis, connect(config.redis, 'subscriber', `pinauth:notify-sub:${config.instanceName}`) as Cluster, keys.socketChannel()))
      : Notifier.classic(redis, keys.socketChannel());
  const common = {
    connection,
    stalledInterval: config.stalledIntervalMs,
    lockDuration: Math.max(config.stalledIntervalMs, 5000),
    maxStalledCount: 3,
  };

  const make = <D, R>(name: string, processor: Processor<D, R>, extra: Record<string, unknown> = {}): Worker<D, R> => {
    const worker = new Worker<D, R>(name, processor, { ...common, prefix: keys.queuePrefix(name), ...extra });
    worker.on('completed', () => hooks.onJobFinished?.(name, 'completed'));
    worker.on('failed', (job, err) => {
      hooks.onJobFinished?.(name, 'failed');
      if (isInbound(name) && job && failedForGood(err, job.attemptsMade, job.opts.attempts)) {
        // nothing retries it now: an operator fixes the cause and replays it
        hooks.onInboundFailed?.();
        log.error('inbound message failed for good; replay with `npm run replay-inbound` once the cause is fixed', {
          queue: name,
          jobId: job.id,
          attempts: job.attemptsMade,
          reason: err.message,
        });
        return;
      }
      // an outage fails every attempt of every job: one line each at debug, the outage itself is reported elsewhere
      const level = isInbound(name) && redisFault(err) !== null ? 'debug' : 'warn';
      log[level]('job failed', { queue: name, jobId: job?.id, attempts: job?.attemptsMade, reason: err.message });
    });
    worker.on('error', (err) => log.error('worker error', { queue: name, error: err.message }));
    return worker;
  };

  // one worker per inbound partition, sharing the process's INBOUND_CONCURRENCY between them
  const partitions = partitionList(config.inboundPartitions);
  const inbound = inboundProcessor(services, notifier, hooks);
  const perPartition = Math.max(1, Math.ceil(config.inboundConcurrency / partitions.length));
  const outboundQueues = services.queues.outbound;
  const outbound = outboundProcessor(createSenders(config, log), config.defaultChannel, log, {
    // a gateway's 429 holds every partition: they all send through the same gateway
    holdQueue: async (ms) => {
      await Promise.all(outboundQueues.map((q) => q.rateLimit(ms)));
    },
    delivery: services.delivery,
    health: services.health,
    ledger: new SendLedger(services.scripts, keys, config.deliveryRecordSeconds),
    onResult: hooks.onOutboundResult,
    onReplySent: hooks.onReplySent,
  });
  const workers: Worker[] = [
    ...partitions.map((k) =>
      make(inboundQueueName(k), inbound, {
        concurrency: perPartition,
        settings: { backoffStrategy: (attemptsMade: number) => inboundBackoff(attemptsMade, config.inboundRetryMaxMs) },
      }),
    ),
    make(QUEUE.expiry, expiryProcessor(services, notifier, hooks.onExpired), { concurrency: 32 }),
    // one worker per outbound partition; the gateway's rate (OUTBOUND_PER_SECOND) is split
    // evenly over them, since BullMQ keeps a limiter per queue (in Redis: shared by every process)
    ...outboundQueues.map((queue) =>
      make(queue.name, outbound, {
        concurrency: Math.max(1, Math.ceil(OUTBOUND_CONCURRENCY / outboundQueues.length)),
        limiter: { max: Math.max(1, Math.floor(config.outboundPerSecond / outboundQueues.length)), duration: 1000 },
        settings: { backoffStrategy: (attemptsMade: number, _type?: string, err?: Error) => outboundBackoff(attemptsMade, err) },
      }),
    ),
  ];

  const stopSafetySweep = startSafetySweep(services, notifier, SAFETY_SWEEP_MS, hooks.onExpired);
  // the accounts made before the directory: indexed once per deployment (accounts/directory.ts)
  let closing = false;
  const backfill = services.directory
    .backfill({ stop: () => closing })
    .then((n) => {
      if (n > 0) log.info('directory: accounts made before it indexed', { accounts: n });
    })
    .catch((err: unknown) => log.warn('directory: backfill stopped; the next start runs it again', { error: String(err) }));

  return {
    workers,
    async close(timeoutMs: number) {
      stopSafetySweep();
      closing = true;
      await backfill;
      const graceful = Promise.all(workers.map((w) => w.close()));
      const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref());
      if ((await Promise.race([graceful.then(() => 'done' as const), timer])) === 'timeout') {
        // Jobs still running are left locked; when their lock lapses another worker picks them
        // up as stalled. (A second close(true) would only return the pending graceful close.)
        log.warn('workers did not finish in time; leaving their jobs to another worker');
        for (const w of workers) void w.disconnect().catch(() => undefined);
      }
      connection.disconnect();
      notifier.close();
      log.info('workers stopped');
    },
  };
}
