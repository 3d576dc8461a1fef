import type { Queue } from 'bullmq';
import client from 'prom-client';

/** The job states reported per queue; a fixed list keeps the label bounded. */
export const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const;

/**
 * Gauges of the deployment as a whole, read from Redis when `/metrics` is scraped (never
 * sampled in between, so they are as fresh as the scrape): queue depths by state and active PINs.
 */
export function createClusterGauges(queues: Queue[], activePins: () => Promise<number>): client.Registry {
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
  return registry;
}
