import { UnrecoverableError, type Job } from 'bullmq';
import { ProviderError, type MessagingProvider } from '../../messaging/providers/provider.js';
import type { Logger } from '../../observability/logger.js';
import type { OutboundJob } from '../jobs.js';

/** Exponential backoff with full jitter, or the gateway's Retry-After when it gave one. */
export function outboundBackoff(attemptsMade: number, err: Error | undefined): number {
  if (err instanceof ProviderError && err.retryAfterMs !== undefined) return Math.min(err.retryAfterMs, 15 * 60_000) + Math.floor(Math.random() * 250);
  const cap = Math.min(1000 * 2 ** Math.max(0, attemptsMade - 1), 5 * 60_000);
  return Math.floor(cap / 2 + Math.random() * (cap / 2));
}

/**
 * The `outbound` processor: one text through the configured provider. Retryable failures
 * (timeouts, connection errors, 429, 5xx) throw and are retried with backoff; others fail the
 * job for good, keeping the reason for the dashboard.
 */
export function outboundProcessor(provider: MessagingProvider, log: Logger) {
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
      log.warn('outbound message failed, will retry', {
        jobId: job.id,
        attempt: job.attemptsMade + 1,
        reason: err instanceof Error ? err.message : String(err),
      });
      throw err;
    }
  };
}
