import { DelayedError, type Job } from 'bullmq';
import type { Notifier } from '../../realtime/notifier.js';
import type { Services } from '../../services.js';
import type { ExpiryJob } from '../jobs.js';

/** Members examined per script call: keeps each call short while a large backlog drains. */
const SWEEP_BATCH = 500;

/**
 * The delayed `expiry` processor: one job per expiry second sweeps every registration that is
 * due (not only its second's: a backlog left while no worker ran goes too). Redis TTLs already
 * ended them at their time; this tidies the active set and tells the registering sockets.
 */
export function expiryProcessor(services: Services, notifier: Notifier, onExpired?: () => void) {
  const { keys, scripts, log } = services;
  return async (job: Job<ExpiryJob>, token?: string): Promise<string> => {
    // a job queued before per-second sweeps carries no second: it just sweeps what is due
    const second = typeof job.data.second === 'number' ? job.data.second : 0;
    let expired = 0;
    let waitMs = 0;
    for (let more = true; more; ) {
      const [wait = '0', full = '0', ...pairs] = await scripts.strings('expire-due', [keys.prefix, (second + 1) * 1000, SWEEP_BATCH]);
      for (let i = 0; i + 1 < pairs.length; i += 2) {
        notifier.pinExpired(pairs[i]!, pairs[i + 1]!);
        onExpired?.();
      }
      expired += pairs.length / 2;
      waitMs = Number(wait);
      more = full === '1';
    }
    if (expired > 0) log.info('pins expired', { count: expired });
    if (waitMs > 0) {
      // fired before its second ended by Redis' clock: sweep the rest of that second later
      await job.moveToDelayed(Date.now() + waitMs + 5, token);
      throw new DelayedError();
    }
    return `expired ${expired}`;
  };
}
