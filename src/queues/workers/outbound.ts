import { UnrecoverableError, type Job } from 'bullmq';
import type { DeliveryTracker } from '../../messaging/delivery.js';
import type { Senders } from '../../messaging/providers/index.js';
import type { ChannelHealth } from '../../messaging/health.js';
import { ProviderError } from '../../messaging/providers/provider.js';
import type { Logger } from '../../observability/logger.js';
import type { OutboundJob } from '../jobs.js';
import type { SendLedger } from '../send-ledger.js';

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
  /** records the gateway's id of each sent message, and failures for good */
  delivery?: Pick<DeliveryTracker, 'sent' | 'failed'>;
  /** every message the gateway took or refused for good, by gateway (metrics) */
  /** where a send error meaning the number is restricted or banned is recorded */
  health?: Pick<ChannelHealth, 'report'>;
  /** `channel`: the one it went out on (or failed on) */
  onResult?: (gateway: string, result: 'sent' | 'failed', channel: string) => void;
  /**
   * The gateway said "slow down" (429 with Retry-After): hold the whole queue, on every worker,
   * for that long, not only this job (BullMQ's queue-wide rate limit).
   */
  holdQueue?: (ms: number) => Promise<void>;
  /**
   * a chat reply the gateway took, by kind, gateway, number (the channel's instance or phone
   * number id) and recipient country: what a reply costs is counted from these (docs/operations.md)
   */
  onReplySent?: (kind: string, gateway: string, number: string, country: string) => void;
  /** tells whether an earlier attempt already got the message to the gateway (send-ledger.ts) */
  ledger?: SendLedger;
}

/**
 * The `outbound` processor: one text through the provider of the job's channel (the default
 * channel for jobs that name none). Retryable failures (timeouts, connection errors, 429, 5xx,
 * a provider's transient codes) throw and are retried with backoff; others fail the job for
 * good, keeping the reason for the dashboard and the delivery record. An attempt after one the
 * gateway already took sends nothing (send-ledger.ts); the job id goes to the gateway as the
 * message's marker where the gateway carries one back.
 */
export function outboundProcessor(senders: Senders, defaultChannel: string, log: Logger, opts: OutboundOptions = {}) {
  const failedForGood = async (job: Job<OutboundJob>, channel: string, gateway: string, reason: string): Promise<void> => {
    opts.onResult?.(gateway, 'failed', channel);
    await opts.delivery?.failed(String(job.id), { kind: job.data.kind, channel }, reason).catch(() => undefined);
  };
  return async (job: Job<OutboundJob>): Promise<{ providerMessageId: string | null; channel: string }> => {
    const channel = job.data.channel ?? defaultChannel;
    const provider = senders.forChannel(channel);
    if (provider === null) {
      const reason = `no gateway configured for channel ${channel}`;
      log.warn('outbound message rejected', { jobId: job.id, kind: job.data.kind, channel, reason });
      await failedForGood(job, channel, channel.split(':')[0]!, reason);
      throw new UnrecoverableError(reason);
    }
    const jobId = String(job.id);
    const before = opts.ledger ? await opts.ledger.begin(jobId) : { state: 'new' as const };
    if (before.state === 'sent') {
      log.info('outbound message already sent by an earlier attempt; not sent again', { jobId, kind: job.data.kind, channel });
      return { providerMessageId: before.providerMessageId, channel };
    }
    if (before.state === 'uncertain') {
      log.warn('outbound message: an earlier attempt was cut off mid-send; sending again (the recipient may get it twice)', {
        jobId,
        kind: job.data.kind,
        channel,
      });
    }
    let sent: { providerMessageId: string | null };
    try {
      sent = await provider.send(job.data.to, job.data.text, { marker: jobId, ...(job.data.buttons ? { buttons: job.data.buttons } : {}) });
    } catch (err) {
      if (err instanceof ProviderError && !err.retryable) {
        log.warn('outbound message rejected', { jobId: job.id, kind: job.data.kind, channel, reason: err.message });
        await failedForGood(job, channel, provider.name, err.message);
        // the number itself is restricted or banned: out of rotation until its gateway says otherwise
        if (err.unhealthy) await opts.health?.report({ channel, healthy: false, reason: err.message }).catch(() => undefined);
        throw new UnrecoverableError(err.message);
      }
      if (err instanceof ProviderError && err.status === 429 && err.retryAfterMs !== undefined && opts.holdQueue) {
        await opts.holdQueue(Math.min(err.retryAfterMs, MAX_RETRY_AFTER_MS)).catch(() => undefined);
      }
      log.warn('outbound message failed', {
        jobId: job.id,
        channel,
        attempt: job.attemptsMade + 1,
        of: job.opts.attempts ?? 1,
        reason: err instanceof Error ? err.message : String(err),
      });
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await failedForGood(job, channel, provider.name, err instanceof Error ? err.message : String(err));
      throw err;
    }
    log.info('outbound message sent', { jobId: job.id, kind: job.data.kind, provider: provider.name, channel });
    opts.onResult?.(provider.name, 'sent', channel);
    const country = job.data.country ?? 'unknown';
    if (job.data.kind !== 'manual') opts.onReplySent?.(job.data.kind, provider.name, channel.slice(channel.indexOf(':') + 1), country);
    // sent is sent: a failure to record it must not make the job send again; the record keeps
    // the kind and country, which the gateway's priced status webhooks are counted by
    await opts.delivery?.sent(String(job.id), { kind: job.data.kind, channel, country }, sent.providerMessageId).catch((err: unknown) => {
      log.warn('delivery record not written', { jobId: job.id, error: err instanceof Error ? err.message : String(err) });
    });
    return { ...sent, channel };
  };
}
