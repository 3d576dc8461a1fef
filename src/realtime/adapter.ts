import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import type { RedisClient } from '../redis/connection.js';

/**
 * Events across nodes: classic pub/sub on one server or through Sentinel; on a Redis Cluster the
 * sharded adapter (SSUBSCRIBE, Redis 7), whose messages stay on the shard owning the channel
 * instead of being broadcast to every node of the cluster. Workers publish to either through
 * notifier.ts. Rooms are a node's local index (delivery.ts): nothing is broadcast to a room
 * across nodes, so the sharded adapter subscribes its namespace channels once (`static`), not
 * one channel per room: no SSUBSCRIBE per registration, none to fail during a failover.
 */
export function socketAdapter(
  sharded: boolean,
  pub: RedisClient,
  sub: RedisClient,
  channel: string,
): ReturnType<typeof createAdapter> | ReturnType<typeof createShardedAdapter> {
  return sharded ? createShardedAdapter(pub, sub, { channelPrefix: channel, subscriptionMode: 'static' }) : createAdapter(pub, sub, { key: channel });
}
