import type { Queue } from 'bullmq';
import type { ExpiryJob } from './jobs.js';
import type { ExpiryScheduler } from '../registrations/service.js';

/** How long after its second ends the sweep runs: room for a little clock skew between hosts. */
const AFTER_SECOND_MS = 20;

/** The id of the one sweep job of an expiry second; BullMQ ignores an add while the id exists. */
export const expiryJobId = (second: number): string => `x-${second}`;

/**
 * Schedules the expiry sweep: at most one delayed job per expiry second, however many
 * registrations end in it (one job per registration cost ~900 B of Redis each). Adds are
 * remembered in-process, so a busy second costs Redis one add per node, not one per
 * registration (a duplicate add still writes a `duplicated` event to the queue's stream).
 */
export class ExpirySchedule implements ExpiryScheduler {
  /** second → its add (settled or in flight); seconds already past are dropped */
  private readonly added = new Map<number, Promise<unknown>>();

  constructor(private readonly queue: Queue<ExpiryJob>) {}

  /** Makes sure the sweep of the second holding `expiresAt` (ms, Redis clock) is queued. */
  async ensure(expiresAt: number): Promise<void> {
    const second = Math.floor(expiresAt / 1000);
    let pending = this.added.get(second);
    if (!pending) {
      this.forgetPast();
      const delay = Math.max(0, (second + 1) * 1000 + AFTER_SECOND_MS - Date.now());
      pending = this.queue.add('expire', { second }, { jobId: expiryJobId(second), delay });
      this.added.set(second, pending);
      // a failed add is retried by the next registration of that second
      pending.catch(() => this.added.delete(second));
    }
    await pending;
  }

  private forgetPast(): void {
    const now = Math.floor(Date.now() / 1000);
    for (const second of this.added.keys()) if (second < now - 1) this.added.delete(second);
  }
}
