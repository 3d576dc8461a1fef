import type { RedisClient } from '../redis/connection.js';
import { DELIVERY_TTL_SECONDS } from '../messaging/delivery.js';
import type { Keys } from '../redis/keys.js';

/**
 * Whether an earlier attempt of an outbound job already got its message to the gateway, read
 * from the job's delivery record (`out:<jobId>`, messaging/delivery.ts: the worker records
 * `sent` with the gateway's id once the gateway took the message). Each attempt also marks the
 * record `sending` before it calls the gateway. So a later attempt (its predecessor's worker died
 * after the gateway answered, before the job completed) finds `sent` and sends nothing; one that
 * finds only `sending` follows an attempt cut off while the gateway was answering: whether that
 * message went out cannot be known (neither Evolution API nor the Cloud API take an idempotency
 * key), so it sends again and says so in the log.
 */
export type LedgerState = { state: 'new' } | { state: 'uncertain' } | { state: 'sent'; providerMessageId: string | null };

const REACHED_GATEWAY = new Set(['sent', 'delivered', 'read']);

export class SendLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    /** the delivery record's lifetime (DELIVERY_RECORD_SECONDS) */
    private readonly ttlSeconds = DELIVERY_TTL_SECONDS,
  ) {}

  /** What earlier attempts of the job did; marks this one as sending unless it was sent. */
  async begin(jobId: string): Promise<LedgerState> {
    const key = this.keys.outbound(jobId);
    const [status = null, gatewayId = null, sending = null] = await this.redis.hmget(key, 'status', 'gatewayId', 'sending');
    if (status !== null && REACHED_GATEWAY.has(status)) return { state: 'sent', providerMessageId: gatewayId || null };
    await this.redis.multi().hset(key, 'sending', Date.now()).expire(key, this.ttlSeconds, 'NX').exec();
    return sending === null ? { state: 'new' } : { state: 'uncertain' };
  }
}
