import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisTopology } from '../config.js';

/**
 * Redis connections by purpose. The request path must fail fast when Redis is down (no offline
 * queue, short timeouts) so clients get 503 instead of a hang; BullMQ workers and subscribers
 * must instead wait and reconnect for ever.
 *
 * The same roles hold for every topology (config.ts `RedisTopology`): one server, a primary
 * found through Sentinel, or a Redis Cluster. Through Sentinel a lost connection asks the
 * sentinels for the primary again on every reconnect, so after a failover each client lands on
 * the promoted replica by itself; until then commands fail (503) and blocked clients wait.
 */
export type ConnectionRole = 'command' | 'worker' | 'subscriber';

/** A client of either kind (what connect() returns); most of the service still takes a `Redis`. */
export type RedisClient = Redis | Cluster;

function roleOptions(role: ConnectionRole, topology: RedisTopology): RedisOptions {
  const reconnect = { retryStrategy: (times: number) => Math.min(50 * times, 1000) };
  if (role === 'command') {
    return { ...reconnect, enableOfflineQueue: false, connectTimeout: 1500, commandTimeout: topology.commandTimeoutMs, maxRetriesPerRequest: 0 };
  }
  return { ...reconnect, maxRetriesPerRequest: null, enableReadyCheck: true };
}

export function redisOptions(topology: Extract<RedisTopology, { kind: 'single' }>, role: ConnectionRole): RedisOptions {
  const tls = topology.url.startsWith('rediss://')
    ? // Heroku Redis presents a self-signed certificate.
      { tls: { rejectUnauthorized: false } }
    : {};
  return { ...tls, ...roleOptions(role, topology) };
}

/** ioredis options to reach the primary through Sentinel. */
export function sentinelOptions(topology: Extract<RedisTopology, { kind: 'sentinel' }>, role: ConnectionRole): RedisOptions {
  return {
    ...roleOptions(role, topology),
    sentinels: topology.sentinels,
    name: topology.name,
    sentinelPassword: topology.sentinelPassword,
    username: topology.username,
    password: topology.password,
    // Never give up on the sentinels (the default stops after a few rounds and leaves the client dead).
    sentinelRetryStrategy: (times: number) => Math.min(100 * times, 1000),
    sentinelCommandTimeout: 1000,
    // A demoted primary that is still reachable keeps our connections and answers writes with
    // READONLY: that command fails (503) and the connection starts again through the sentinels.
    // (ioredis' failoverDetector would do it on +switch-master, but each sentinel announces the
    // switch in turn, and every announcement dropped every connection again: 503s for seconds.)
    reconnectOnError: (err: Error) => err.message.startsWith('READONLY'),
  };
}

/**
 * One connection of `role` to the topology's (current) primary (`overrides` for a connection
 * with special needs, e.g. a longer command timeout). Not for cluster mode: see connect().
 */
export function createRedis(topology: RedisTopology, role: ConnectionRole, name: string, overrides: RedisOptions = {}): Redis {
  let client: Redis;
  if (topology.kind === 'single') {
    client = new Redis(topology.url, { ...redisOptions(topology, role), ...overrides, connectionName: name, lazyConnect: false });
  } else if (topology.kind === 'sentinel') {
    client = new Redis({ ...sentinelOptions(topology, role), ...overrides, connectionName: name, lazyConnect: false });
  } else {
    throw new Error('createRedis: cluster mode needs connect() (a Cluster client)');
  }
  // Errors are reported through health checks and failed requests; an unhandled 'error' event would crash.
  client.on('error', () => undefined);
  return client;
}

/** ioredis Cluster options for a role: the per-node options of the role, plus slot-map upkeep. */
export function clusterOptions(topology: Extract<RedisTopology, { kind: 'cluster' }>, role: ConnectionRole, name: string): ClusterOptions {
  const { retryStrategy: _perNode, enableOfflineQueue, ...perNode } = roleOptions(role, topology);
  return {
    enableOfflineQueue: enableOfflineQueue ?? true,
    clusterRetryStrategy: (times: number) => Math.min(100 * times, 1000),
    // A primary failing over answers CLUSTERDOWN / TRYAGAIN for a moment: retry a little, not for ever.
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    slotsRefreshTimeout: 2000,
    // Sharded pub/sub (SSUBSCRIBE) goes to the node owning each channel's slot.
    shardedSubscribers: role === 'subscriber',
    redisOptions: { ...perNode, connectionName: name, username: topology.username, password: topology.password },
  };
}

/** A client of the right kind for the topology: `Redis` for one server or Sentinel, `Cluster` for a cluster. */
export function connect(topology: RedisTopology, role: ConnectionRole, name: string): RedisClient {
  if (topology.kind !== 'cluster') return createRedis(topology, role, name);
  const client = new Cluster(topology.nodes, clusterOptions(topology, role, name));
  client.on('error', () => undefined);
  return client;
}

/** Resolves once the client is ready, or rejects after timeoutMs. */
export function waitReady(client: RedisClient, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = (): void => {
      cleanup();
      resolve();
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      client.off('ready', onReady);
    };
    client.on('ready', onReady);
  });
}
