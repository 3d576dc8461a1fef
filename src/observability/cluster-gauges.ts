import type { Queue } from 'bullmq';
import client from 'prom-client';

/** The job states reported per queue; a fixed list keeps the label bounded. */
export const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const;

/**
 * Gauges of the deployment as a whole, read from Redis when `/metrics` is scraped (never
 * sampled in between, so they are as fresh as the scrape): queue depths by state, active PINs and each channel's health.
 */
export function createClusterGauges(
  queues: Queue[],
  activePins: () => Promise<number>,
  channelHealth: () => Promise<Map<string, { healthy: boolean }>> = async () => new Map(),
): client.Registry {
  const registry = new client.Registry();
  new client.Gauge({
    name: 'pinauth_queue_jobs',
    help: 'Jobs in each queue by state',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      const counts = await Promise.all(queues.map((q) => q.getJobCounts(...JOB_STATES)));
      queues.forEach((q, i) => {
        for (const state of JOB_STATES) this.set({ queue: q.name, state }, counts[i]![state] ?? 0);
      });
    },
  });
  new client.Gauge({
    name: 'pinauth_active_pins',
    help: 'Registrations pending a login',
    registers: [registry],
    async collect() {
      this.set(await activePins());
    },
  });
  new client.Gauge({
    name: 'pinauth_channel_healthy',
    help: 'Each channel as its gateway last reported it: 1 in rotation, 0 out (logged out, banned, restricted, quality flagged)',
    labelNames: ['gateway', 'number'] as const,
    registers: [registry],
    async collect() {
      for (const [channel, state] of await channelHealth()) {
        const colon = channel.indexOf(':');
        const labels = colon === -1 ? { gateway: channel, number: '' } : { gateway: channel.slice(0, colon), number: channel.slice(colon + 1) };
        this.set(labels, state.healthy ? 1 : 0);
      }
    },
  });
  return registry;
}
