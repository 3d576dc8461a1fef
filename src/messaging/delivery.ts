import type { RedisClient } from '../redis/connection.js';
import type { OutboundKind } from '../chat/message.js';
import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';
import type { DeliveryStatus, StatusUpdate } from './inbound-shapes.js';

/**
 * Delivery tracking of outbound messages (delivery.lua): `/send-message` records its job as
 * queued with its owner, the worker records the gateway's id for it once the gateway took it
 * (or that it failed for good), and the gateways' status webhooks move it on (Cloud API
 * `statuses[]`, Evolution `messages.update` and `send.message`). Kept as long as a failed job
 * (7 days). The owner reads it through `GET /messages/:id`.
 */
export const DELIVERY_TTL_SECONDS = 7 * 86400;

export type TrackedStatus = 'queued' | DeliveryStatus;
export type StatusResult = 'updated' | 'stale' | 'unknown';

/** What `GET /messages/:id` answers (the owner only). */
export interface DeliveryRecord {
  messageId: string;
  status: TrackedStatus;
  channel: string;
  kind: string;
  /** the gateway's id for the message (Cloud API wamid, Evolution key.id), once it took it */
  gatewayMessageId: string | null;
  /** ms since epoch of each status reached */
  at: Partial<Record<TrackedStatus, number>>;
  error: string | null;
}

const STATUSES: TrackedStatus[] = ['queued', 'sent', 'delivered', 'read', 'failed'];

export class DeliveryTracker {
  constructor(
    private readonly redis: RedisClient,
    private readonly scripts: Scripts,
    private readonly keys: Keys,
    /** DELIVERY_RECORD_SECONDS */
    private readonly ttlSeconds = DELIVERY_TTL_SECONDS,
  ) {}

  /**
   * Records a status of our job (scripts/delivery-*.lua): with the gateway's id, link it to the job
   * and apply the statuses that arrived before it, dropping them only once applied, so a crash
   * between the steps (gateway id and job are on different slots) loses none.
   */
  private async track(
    jobId: string,
    status: TrackedStatus,
    channel: string,
    gatewayId: string | null,
    error: string,
    fields: Record<string, string>,
  ): Promise<void> {
    const pairs = Object.entries(fields).flat();
    const apply = (early: string[]) =>
      this.scripts.run(
        'delivery-apply',
        [this.keys.outbound(jobId)],
        ['1', status, Date.now(), this.ttlSeconds, error, gatewayId ?? '', pairs.length / 2, ...pairs, ...early],
      );
    if (!gatewayId) {
      await apply([]);
      return;
    }
    const early = this.keys.outboundEarly(channel, gatewayId);
    const statuses = await this.scripts.run('delivery-link', [this.keys.outboundByGateway(channel, gatewayId), early], [jobId, this.ttlSeconds]);
    await apply(statuses);
    await this.scripts.run('delivery-drop-early', [early]);
  }

  /** A message /send-message queued for `owner`. */
  queued(jobId: string, m: { owner: string; kind: OutboundKind; channel: string }): Promise<unknown> {
    return this.track(jobId, 'queued', m.channel, null, '', { owner: m.owner, kind: m.kind, channel: m.channel });
  }

  /** The gateway took it; `gatewayId` is its id there (null when the gateway gave none). */
  sent(jobId: string, m: { kind: OutboundKind; channel: string; country?: string }, gatewayId: string | null): Promise<unknown> {
    return this.track(jobId, 'sent', m.channel, gatewayId, '', {
      kind: m.kind,
      channel: m.channel,
      ...(m.country !== undefined ? { country: m.country } : {}),
    });
  }

  /**
   * The kind and recipient country of the message a priced status update is about, from its
   * record (linked by the gateway's id the send returned), and whether this is the first priced
   * status of it (Meta repeats `pricing` on sent, delivered and read: a message counts once).
   * A message we have no record of (expired, or its status beat the send's answer) is `unknown`
   * and counts on its `sent` status.
   */
  async priced(u: Pick<StatusUpdate, 'channel' | 'gatewayId' | 'status'>): Promise<{ kind: string; country: string; first: boolean }> {
    const jobId = await this.redis.get(this.keys.outboundByGateway(u.channel, u.gatewayId));
    const record = jobId === null ? null : this.keys.outbound(jobId);
    const [kind = null, country = null] = record === null ? [] : await this.redis.hmget(record, 'kind', 'country');
    // HSETNX only on a record that exists: it must not make a key without a TTL
    if (record === null || kind === null) return { kind: 'unknown', country: 'unknown', first: u.status === 'sent' };
    const first = (await this.redis.hsetnx(record, 'priced', '1')) === 1;
    return { kind, country: country ?? 'unknown', first };
  }

  /** It failed for good before the gateway took it. */
  failed(jobId: string, m: { kind: OutboundKind; channel: string }, reason: string): Promise<unknown> {
    return this.track(jobId, 'failed', m.channel, null, reason.slice(0, 300), { kind: m.kind, channel: m.channel });
  }

  /** A gateway's status update of one of our messages. */
  async status(u: StatusUpdate): Promise<StatusResult> {
    const at = Math.round(u.at);
    const gw = [this.keys.outboundByGateway(u.channel, u.gatewayId), this.keys.outboundEarly(u.channel, u.gatewayId)];
    const found = await this.scripts.run('delivery-lookup', gw, [u.status, at, u.error ?? '']);
    if (found.kind !== 'job') return 'unknown';
    return this.scripts.run('delivery-apply', [this.keys.outbound(found.jobId)], ['0', u.status, at, this.ttlSeconds, u.error ?? '', '', 0]);
  }

  /** The record of an outbound job and its owner (null when unknown or expired). */
  async read(jobId: string): Promise<{ owner: string | null; record: DeliveryRecord } | null> {
    const h = await this.redis.hgetall(this.keys.outbound(jobId));
    if (!h.status) return null;
    const at: Partial<Record<TrackedStatus, number>> = {};
    for (const s of STATUSES) if (h[`${s}At`]) at[s] = Number(h[`${s}At`]);
    return {
      owner: h.owner ?? null,
      record: {
        messageId: jobId,
        status: h.status as TrackedStatus,
        channel: h.channel ?? '',
        kind: h.kind ?? '',
        gatewayMessageId: h.gatewayId ?? null,
        at,
        error: h.error ?? null,
      },
    };
  }
}
