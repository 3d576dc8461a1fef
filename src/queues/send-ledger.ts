import { DELIVERY_TTL_SECONDS } from '../messaging/delivery.js';
import type { Keys } from '../redis/keys.js';
import type { Scripts, SendBeginReply } from '../redis/scripts.js';

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
export type LedgerState = SendBeginReply;

export class SendLedger {
  constructor(
    private readonly scripts: Scripts,
    private readonly keys: Keys,
    /** the delivery record's lifetime (DELIVERY_RECORD_SECONDS) */
    private readonly ttlSeconds = DELIVERY_TTL_SECONDS,
  ) {}

  /** What earlier attempts of the job did; marks this one as sending unless it was sent (send-begin.lua: one call). */
  begin(jobId: string): Promise<LedgerState> {
    return this.scripts.run('send-begin', [this.keys.outbound(jobId)], [Date.now(), this.ttlSeconds]);
  }
}
