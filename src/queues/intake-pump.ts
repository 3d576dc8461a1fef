import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config.js';
import { inboundJobId } from '../messaging/intake.js';
import type { Logger } from '../observability/logger.js';
import { connect, type RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';
import type { InboundJob } from './jobs.js';
import { partitionList } from './partitions.js';
import type { Queues } from './queues.js';

/**
 * Moves accepted webhook messages from the intake stream (written by the web, intake.ts) onto
 * the `inbound` queue. Lossless by order of operations: entries are read without being removed,
 * added under their deterministic job ids, and only then deleted by id. A crash
 * or failure in between leaves them in the stream, and the next read (from the start) adds them
 * again: BullMQ keeps the existing job for a known id, and the worker drops a message it has
 * already matched, so each accepted webhook still becomes one processed job.
 * One pump works at a time (a lock renewed about every second) so workers do not add every message
 * twice; another worker's pump takes over within PUMP_LOCK_MS when the holder dies.
 * XREAD BLOCK wakes as soon as the web writes, so the hop adds about a round trip of latency.
 * With INBOUND_PARTITIONS = N every worker runs N pumps, pump k moving stream k onto queue k
 * (queues/partitions.ts); each takes its own lock, so the partitions spread over the workers.
 */
export interface IntakePump {
  stop(): Promise<void>;
}

/** What the pumps use of the process's services (services.ts's bag has it). */
export interface IntakePumpServices {
  config: Config;
  log: Logger;
  redis: RedisClient;
  keys: Keys;
  scripts: Scripts;
  queues: Pick<Queues, 'inbound'>;
}

const PUMP_LOCK_MS = 5000;
/** a read blocks at most BLOCK_MS and a batch takes far less, so renewing every RENEW_MS keeps the lock */
const RENEW_MS = 1000;
const BLOCK_MS = 1000;
const BATCH = 500;
const RETRY_MS = 200;
const WARN_EVERY_MS = 30_000;

type StreamReply = [key: string, entries: [id: string, fields: string[]][]][] | null;

/** The pumps of every partition, stopped together. */
export function startIntakePumps(services: IntakePumpServices): IntakePump {
  const pumps = partitionList(services.config.inboundPartitions).map((k) => startIntakePump(services, k));
  return {
    async stop() {
      await Promise.all(pumps.map((p) => p.stop()));
    },
  };
}

export function startIntakePump(services: IntakePumpServices, partition = 0): IntakePump {
  const { config, keys, scripts, redis, queues, log } = services;
  const stream = keys.inboundIntake(partition);
  const lockKey = keys.intakePumpLock(partition);
  const queue = queues.inbound[partition]!;
  const token = randomBytes(9).toString('base64url');
  // XREAD BLOCK holds its connection: one of its own, waiting out Redis outages like the workers'
  const reader = connect(config.redis, 'worker', `pinauth:pump${partition || ''}:${config.instanceName}`);
  const lock = (ttlMs: number) => scripts.number('intake-lock', [lockKey, token, ttlMs]);
  let running = true;
  const stopped = new AbortController();
  // A pending XREAD is not always failed by disconnect() (not while reconnecting): stop waits for it no longer.
  const aborted = new Promise<never>((_, reject) => stopped.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }));
  aborted.catch(() => undefined);

  const pumpOnce = async (after: string): Promise<string> => {
    const reply = (await Promise.race([reader.xread('COUNT', BATCH, 'BLOCK', BLOCK_MS, 'STREAMS', stream, after), aborted])) as StreamReply;
    const entries = reply?.[0]?.[1] ?? [];
    if (entries.length === 0) return after;
    // `add` each rather than `addBulk`: ioredis sends a script inside a MULTI/pipeline as a full
    // EVAL (BullMQ's add script is tens of KB) once per batch, and here batches are mostly of one
    await Promise.all(
      entries.map(([, fields]) => {
        const data = JSON.parse(fields[1]!) as InboundJob;
        return queue.add('message', data, { jobId: inboundJobId(data.message.id) });
      }),
    );
    await redis.xdel(stream, ...entries.map(([id]) => id));
    return entries[entries.length - 1]![0];
  };

  const loop = (async () => {
    let holding = false;
    let renewedAt = 0;
    let after = '0';
    let failingSince = 0;
    let warnedAt = 0;
    while (running) {
      try {
        // renewed once per RENEW_MS, not per read: at a steady trickle a read is one message
        const due: boolean = !holding || Date.now() - renewedAt >= RENEW_MS;
        const held: boolean = due ? (await lock(PUMP_LOCK_MS)) === 1 : true;
        if (due && held) renewedAt = Date.now();
        // (re)gaining the lock: start from the beginning, whatever another pump left
        if (held && !holding) after = '0';
        holding = held;
        if (!holding) await sleep(BLOCK_MS, undefined, { signal: stopped.signal });
        else after = await pumpOnce(after);
        if (failingSince !== 0) {
          log.info('intake pump: Redis answers again', { partition, seconds: Math.round((Date.now() - failingSince) / 1000) });
          failingSince = 0;
        }
      } catch (err) {
        if (!running) break;
        // an outage fails every round (5 a second): said once when it starts and every WARN_EVERY_MS
        if (failingSince === 0 || Date.now() - warnedAt >= WARN_EVERY_MS) {
          failingSince ||= Date.now();
          warnedAt = Date.now();
          log.warn('intake pump: Redis failed; retrying until it answers', { partition, error: err instanceof Error ? err.message : String(err) });
        }
        after = '0';
        await sleep(RETRY_MS, undefined, { signal: stopped.signal }).catch(() => undefined);
      }
    }
    if (holding) await lock(1).catch(() => undefined);
  })();

  return {
    async stop() {
      running = false;
      stopped.abort();
      // ends a pending XREAD BLOCK at once; adds in flight finish on the command connection
      reader.disconnect();
      await loop;
    },
  };
}
