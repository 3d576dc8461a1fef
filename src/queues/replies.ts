import type { ReplyFacts } from '../chat/texts.js';
import { confirmButtons, replyText } from '../chat/texts.js';
import type { ChatConfig } from '../config.js';
import { recipientCountry, replyAddress } from '../messaging/reply.js';
import type { Logger } from '../observability/logger.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { Limits } from '../security/limits.js';
import type { InboundMessage, OutboundJob } from './jobs.js';
import type { Queues } from './queues.js';

/** Why a reply was not sent: its kind is switched off (CHAT_REPLY_KINDS), or its country's daily cap is reached. */
export type WithheldReason = 'policy' | 'daily-cap';

export interface ReplyPolicyDeps {
  redis: RedisClient;
  keys: Keys;
  log: Logger;
  /** a reply not sent, by kind, reason and recipient country (metrics) */
  onWithheld?: (kind: string, reason: WithheldReason, country: string) => void;
}

/** The UTC day a daily cap counts in. */
const utcDay = (now = Date.now()): string => new Date(now).toISOString().slice(0, 10);

/**
 * The one place a chat reply is queued on `outbound`: on the channel the message came on (the
 * same Evolution instance, the same Cloud API number: messaging/reply.ts), to its sender (the
 * address the gateway gave, the phone, the business-scoped user id or the LID), at most once per message
 * (job id), and rate-limited per recipient so nobody can use the service to spam a number.
 * Replies cost money (docs/operations.md), so they are a policy: a kind switched off
 * (CHAT_REPLY_KINDS) is not sent, and past REPLY_DAILY_CAP_PER_COUNTRY replies to one country in
 * a UTC day none goes there until the next but the question (counted, never withheld: a login
 * needs it); the login goes on either way. The question carries
 * YES / NO buttons bound to its number, shown where the gateway has them.
 */
export class ChatReplies {
  constructor(
    private readonly queues: Queues,
    private readonly limits: Limits,
    private readonly cfg: ChatConfig,
    /** where messages that name no channel (a Cloud API webhook without a usable `phone_number_id`) are answered */
    private readonly defaultChannel: string,
    private readonly policy: ReplyPolicyDeps,
  ) {}

  async answer(message: InboundMessage, facts: ReplyFacts): Promise<void> {
    if (!this.cfg.enabled) return;
    const country = recipientCountry(message.phone);
    // the question is never withheld: a sign-in waits for its answer (an admin is asked even with LOGIN_CONFIRMATION off)
    if (!this.cfg.kinds.has(facts.kind) && facts.kind !== 'confirm') {
      this.policy.onWithheld?.(facts.kind, 'policy', country);
      return;
    }
    const address = replyAddress(message, this.defaultChannel);
    if (address === null) return;
    // the slow-down notice goes once per sender window by itself, to a sender whose replies may be spent
    if (facts.kind !== 'slow-down' && !(await this.limits.tryConsume('reply', address.to))) return;
    // the question counts toward the cap but is always sent: without it nobody can sign in
    if (!(await this.underDailyCap(country, facts.kind)) && facts.kind !== 'confirm') return;
    const job: OutboundJob = { to: address.to, text: replyText(this.cfg, facts), kind: facts.kind, channel: address.channel, country };
    if (facts.kind === 'confirm') job.buttons = confirmButtons(this.cfg, facts.question);
    // one reply per chat message, even when its job is retried after queueing it
    const jobId = `r${message.id}`;
    await this.queues.outboundFor(jobId).add('reply', job, { jobId });
  }

  /** Counts this reply against its country's cap of the UTC day; false once the cap is passed. */
  private async underDailyCap(country: string, kind: string): Promise<boolean> {
    const cap = this.cfg.dailyCapPerCountry;
    if (cap === 0) return true;
    const day = utcDay();
    const key = this.policy.keys.rateLimit(`reply-day:${day}:${country}`);
    // kept two days: the whole UTC day, whatever the clocks' skew
    const [[, count]] = (await this.policy.redis
      .multi()
      .incr(key)
      .expire(key, 2 * 86400)
      .exec()) as [[Error | null, number]];
    if (count <= cap) return true;
    if (kind !== 'confirm') this.policy.onWithheld?.(kind, 'daily-cap', country);
    // one warning per country and day, when the cap is first passed
    if (count === cap + 1) this.policy.log.warn('daily reply cap reached: no more replies to this country today (UTC); logins go on', { country, cap, day });
    return false;
  }
}
