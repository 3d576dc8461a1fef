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
   * Resolves once every write made before the call is on enough replicas, or on every replica
   * connected when fewer than asked are (degraded, counted); rejects with 503 NETWORK_ERROR when
   * a connected replica did not acknowledge within the timeout (nothing promised).
   */
  sync(): Promise<void>;
  /** barriers passed with fewer replicas than REDIS_WAIT_REPLICAS connected (metrics) */
  degraded(): number;
  close(): void;
}

const NO_BARRIER: ReplicaBarrier = { sync: () => Promise.resolve(), degraded: () => 0, close: () => undefined };

/** How often a degraded barrier is logged at most (every one is counted). */
const WARN_EVERY_MS = 60_000;
/** While degraded, how often the connected replicas are counted again (a replica back is waited for again). */
const RECHECK_MS = 5000;

/** `connected_slaves` of INFO replication: the replicas linked to this primary now. */
async function connectedReplicas(client: Redis): Promise<number> {
  const info = await client.info('replication');
  return Number(/^connected_slaves:(\d+)/m.exec(info)?.[1] ?? 0);
}

/**
 * Missing replicas degrade, slow ones refuse. A replica that is not connected holds nothing a
 * failover could promote in place of the primary's data (it resyncs in full when it returns),
 * so waiting for it protects nothing and would refuse every webhook until a person acts: the
 * barrier then waits for the replicas that are connected, and counts and logs the shortfall
 * (`pinauth_replica_wait_degraded_total`). A connected replica that did not acknowledge in time
 * may be the one promoted next: that is a 503 (the webhook) or a retry (the worker), as before.
 */
export function createReplicaBarrier(
  topology: RedisTopology,
  opts: { replicas: number; timeoutMs: number; key: string; name: string; warn?: (message: string, meta: Record<string, unknown>) => void },
): ReplicaBarrier {
  if (opts.replicas === 0) return NO_BARRIER;
  // the WAIT itself may take timeoutMs: the command timeout must outlast it
  const client: Redis = createRedis(topology, 'command', opts.name, { commandTimeout: opts.timeoutMs + 1500 });

  // replicas waited for: fewer while some are not connected, looked at again every RECHECK_MS
  let want = opts.replicas;
  let checkedAt = 0;
  let degradedCount = 0;
  let warnedAt = 0;
  const degrade = (connected: number): void => {
    want = connected;
    checkedAt = Date.now();
    degradedCount++;
    if (Date.now() - warnedAt < WARN_EVERY_MS) return;
    warnedAt = Date.now();
    opts.warn?.('REDIS_WAIT_REPLICAS: fewer replicas connected than asked; accepted writes are on the primary and every connected replica only', {
      asked: opts.replicas,
      connected,
    });
  };

  const once = async (): Promise<void> => {
    if (want < opts.replicas && Date.now() - checkedAt >= RECHECK_MS) {
      want = Math.min(opts.replicas, await connectedReplicas(client));
      checkedAt = Date.now();
    }
    const replies = await client.pipeline().set(opts.key, String(Date.now()), 'PX', 60_000).call('WAIT', want, opts.timeoutMs).exec();
    const failed = replies?.find(([err]) => err !== null)?.[0];
    if (failed) throw failed;
    const acked = Number(replies?.[1]?.[1] ?? 0);
    if (acked >= opts.replicas) return;
    if (acked >= want) {
      degradedCount++;
      return;
    }
    const connected = await connectedReplicas(client);
    if (acked >= connected) return degrade(connected);
    const message = `Redis: ${acked} of ${want} replicas acknowledged in ${opts.timeoutMs} ms`;
    throw new AppError('NETWORK_ERROR', message, { cause: new Error(`NOREPLICAS ${message}`) });
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
    degraded: () => degradedCount,
    close: () => client.disconnect(),
  };
}
