import type { RedisClient } from '../redis/connection.js';
import client, { type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Logger } from './logger.js';

/**
 * Why snapshots in Redis: a worker dyno has no routable port, and Heroku's router sends a
 * scrape of `/metrics` to any one web dyno. So each process writes its registry (as JSON) into
 * one Redis hash every interval, field = node name, and whichever web node is scraped reports
 * every live node's series with a `node` label. A node that stops publishing drops out after
 * `staleAfterMs`, so its series end (Prometheus treats that as staleness, never as a reset).
 */
type MetricJson = MetricObjectWithValues<MetricValue<string>>;

interface Snapshot {
  at: number;
  metrics: MetricJson[];
}

export interface SnapshotPublisher {
  /** writes this process's snapshot now */
  publish(): Promise<void>;
  /** stops the timer and writes a last snapshot, so counts made while draining are kept */
  stop(): Promise<void>;
}

export function startSnapshotPublisher(opts: {
  redis: RedisClient;
  key: string;
  node: string;
  registry: client.Registry;
  intervalMs: number;
  log: Logger;
}): SnapshotPublisher {
  const publish = async (): Promise<void> => {
    const snapshot: Snapshot = { at: Date.now(), metrics: (await opts.registry.getMetricsAsJSON()) as MetricJson[] };
    // the hash outlives its last writer by a while, then goes (dead fields are pruned on scrape)
    await opts.redis
      .multi()
      .hset(opts.key, opts.node, JSON.stringify(snapshot))
      .pexpire(opts.key, 20 * opts.intervalMs + 60_000)
      .exec();
  };
  const timer = setInterval(() => {
    publish().catch((err: unknown) => opts.log.debug('metrics snapshot not written', { error: String(err) }));
  }, opts.intervalMs);
  timer.unref();
  return {
    publish,
    async stop() {
      clearInterval(timer);
      await publish().catch((err: unknown) => opts.log.warn('last metrics snapshot not written', { error: String(err) }));
    },
  };
}

function withNode(metrics: MetricJson[], node: string): MetricJson[] {
  return metrics.map((m) => ({ ...m, values: m.values.map((v) => ({ ...v, labels: { ...v.labels, node } })) }));
}

/**
 * The whole deployment's metrics as Prometheus text: every fresh snapshot (this node's taken
 * live rather than from Redis), each series labelled with its node, plus `live`, the gauges
 * read at scrape time (queue depths, active PINs), which describe the cluster and carry no node.
 */
export async function renderClusterMetrics(opts: {
  redis: RedisClient;
  key: string;
  node: string;
  registry: client.Registry;
  live: client.Registry;
  staleAfterMs: number;
}): Promise<{ contentType: string; text: string }> {
  const stored = await opts.redis.hgetall(opts.key);
  const now = Date.now();
  const perNode: MetricJson[][] = [];
  const stale: string[] = [];
  for (const [node, json] of Object.entries(stored)) {
    if (node === opts.node) continue;
    let snapshot: Snapshot;
    try {
      snapshot = JSON.parse(json) as Snapshot;
    } catch {
      stale.push(node);
      continue;
    }
    if (now - snapshot.at > opts.staleAfterMs) stale.push(node);
    else perNode.push(withNode(snapshot.metrics, node));
  }
  if (stale.length > 0) await opts.redis.hdel(opts.key, ...stale);
  perNode.push(withNode((await opts.registry.getMetricsAsJSON()) as MetricJson[], opts.node));

  // every value carries a node label, so "aggregating" only unions the snapshots
  const aggregated = client.AggregatorRegistry.aggregate(perNode) as client.Registry;
  const merged = client.Registry.merge([aggregated, opts.live]);
  return { contentType: merged.contentType, text: await merged.metrics() };
}
