import { UnrecoverableError, type Job } from 'bullmq';
import { ProviderError, type MessagingProvider } from '../../messaging/providers/provider.js';
import type { Logger } from '../../observability/logger.js';
import type { OutboundJob } from '../jobs.js';

/** Longest wait we take from a gateway's Retry-After; beyond it a reply is of no use anyway. */
const MAX_RETRY_AFTER_MS = 15 * 60_000;
const MAX_BACKOFF_MS = 5 * 60_000;

/** Exponential backoff with jitter (½ to 1 × 2^(n-1) s), or the gateway's Retry-After when it gave one. */
export function outboundBackoff(attemptsMade: number, err: Error | undefined): number {
  if (err instanceof ProviderError && err.retryAfterMs !== undefined) {
    return Math.min(err.retryAfterMs, MAX_RETRY_AFTER_MS) + Math.floor(Math.random() * 250);
  }
  const cap = Math.min(1000 * 2 ** Math.max(0, attemptsMade - 1), MAX_BACKOFF_MS);
  return Math.floor(cap / 2 + Math.random() * (cap / 2));
}

export interface OutboundOptions {
  /**
   * The gateway said "slow down" (429 with Retry-After): hold the whole queue, on every worker,
   * for that long, not only this job (BullMQ's queue-wide rate limit).
   */
  holdQueue?: (ms: number) => Promise<void>;
}

/**
 * The `outbound` processor: one text through the configured provider. Retryable failures
 * (timeouts, connection errors, 429, 5xx, a provider's transient codes) throw and are retried
 * with backoff; others fail the job for good, keeping the reason for the dashboard.
 */
export function outboundProcessor(provider: MessagingProvider, log: Logger, opts: OutboundOptions = {}) {
  return async (job: Job<OutboundJob>): Promise<{ providerMessageId: string | null }> => {
    try {
      const sent = await provider.send(job.data.to, job.data.text);
      log.info('outbound message sent', { jobId: job.id, kind: job.data.kind, provider: provider.name });
      return sent;
    } catch (err) {
      if (err instanceof ProviderError && !err.retryable) {
        log.warn('outbound message rejected', { jobId: job.id, kind: job.data.kind, reason: err.message });
        throw new UnrecoverableError(err.message);
      }
      if (err instanceof ProviderError && err.status === 429 && err.retryAfterMs !== undefined && opts.holdQueue) {
        await opts.holdQueue(Math.min(err.retryAfterMs, MAX_RETRY_AFTER_MS)).catch(() => undefined);
      }
      log.warn('outbound message failed', {
        jobId: job.id,
        attempt: job.attemptsMade + 1,
        of: job.opts.attempts ?? 1,
        reason: err instanceof Error ? err.message : String(err),
      });
      throw err;
    }
  };
}
