import type { Redis } from 'ioredis';
import type { RedisTopology } from '../config.js';
import { AppError } from '../errors.js';
import { createRedis } from './connection.js';

/**
 * "Accepted" across an asynchronous replica. Redis acknowledges a write once the primary has
 * it; a primary killed a moment later takes the write with it, and Sentinel promotes a replica
 * that never saw it. So where the service promises something (a webhook answered 200, a login
 * announced), it first waits until `replicas` replicas hold everything written so far.
 *
 * WAIT counts the writes of the connection that sends it, and blocks that connection. So the
 * barrier has a connection of its own: it writes one small key, then WAITs. Replication is one
 * ordered stream, so a replica that acknowledged the barrier's write holds every write any
 * client made before it. Callers arriving while a barrier is in flight share the next one
 * (group commit): one WAIT per round trip, however many requests wait on it.
 */
export interface ReplicaBarrier {
  /**
   * Resolves once every write made before the call is on enough replicas; rejects with
   * 503 NETWORK_ERROR when they did not all acknowledge within the timeout (nothing promised).
   */
  sync(): Promise<void>;
  close(): void;
}

const NO_BARRIER: ReplicaBarrier = { sync: () => Promise.resolve(), close: () => undefined };

export function createReplicaBarrier(
  topology: RedisTopology,
  opts: { replicas: number; timeoutMs: number; key: string; name: string },
): ReplicaBarrier {
  if (opts.replicas === 0) return NO_BARRIER;
  // the WAIT itself may take timeoutMs: the command timeout must outlast it
  const client: Redis = createRedis(topology, 'command', opts.name, { commandTimeout: opts.timeoutMs + 1500 });

  const once = async (): Promise<void> => {
    const replies = await client.pipeline().set(opts.key, String(Date.now()), 'PX', 60_000).call('WAIT', opts.replicas, opts.timeoutMs).exec();
    const failed = replies?.find(([err]) => err !== null)?.[0];
    if (failed) throw failed;
    const acked = Number(replies?.[1]?.[1] ?? 0);
    if (acked < opts.replicas) {
      throw new AppError('NETWORK_ERROR', `Redis: ${acked} of ${opts.replicas} replicas acknowledged in ${opts.timeoutMs} ms`);
    }
  };

  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  const start = (): Promise<void> => {
    const p = once().finally(() => {
      if (running === p) running = null;
    });
    running = p;
    return p;
  };

  return {
    sync() {
      if (!running) return start();
      // a barrier already on the wire may have been sent before this caller's write: wait for the next one
      queued ??= running
        .catch(() => undefined)
        .then(() => {
          queued = null;
          return start();
        });
      return queued;
    },
    close: () => client.disconnect(),
  };
}
