import { DelayedError, type Job } from 'bullmq';
import type { Notifier } from '../../realtime/notifier.js';
import type { Services } from '../../services.js';
import type { ExpiryJob } from '../jobs.js';

/**
 * The delayed `expiry` processor. Redis TTLs already ended the registration at its time; this
 * confirms it was still pending, tidies the active set and tells the registering sockets.
 */
export function expiryProcessor(services: Services, notifier: Notifier, onExpired?: () => void) {
  const { keys, scripts, log } = services;
  return async (job: Job<ExpiryJob>, token?: string): Promise<string> => {
    const { pinHash, pinId } = job.data;
    const outcome = await scripts.number('expire', [keys.prefix, pinHash, pinId]);
    if (outcome < 0) {
      // fired a little early by this host's clock: wait the rest by Redis' clock
      await job.moveToDelayed(Date.now() - outcome + 5, token);
      throw new DelayedError();
    }
    if (outcome === 0) return 'nothing-to-do';
    notifier.pinExpired(pinHash, pinId);
    onExpired?.();
    log.info('pin expired', { pinId });
    return 'expired';
  };
}
