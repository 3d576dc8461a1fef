import type { ReplyFacts } from '../chat/texts.js';
import { replyText } from '../chat/texts.js';
import type { ChatConfig } from '../config.js';
import { replyAddress } from '../messaging/reply.js';
import type { Limits } from '../security/limits.js';
import type { InboundMessage, OutboundJob } from './jobs.js';
import type { Queues } from './queues.js';

/**
 * The one place a chat reply is queued on `outbound`: on the channel the message came on (the
 * same Evolution instance, the same Cloud API number: messaging/reply.ts), to its sender (the
 * address the gateway gave, the phone, the business-scoped user id or the LID), at most once per message
 * (job id), and rate-limited per recipient so nobody can use the service to spam a number.
 */
export class ChatReplies {
  constructor(
    private readonly queues: Queues,
    private readonly limits: Limits,
    private readonly cfg: ChatConfig,
    /** where messages that name no channel (queued before channels existed) are answered */
    private readonly defaultChannel: string,
  ) {}

  async answer(message: InboundMessage, facts: ReplyFacts): Promise<void> {
    if (!this.cfg.enabled) return;
    const address = replyAddress(message, this.defaultChannel);
    if (address === null) return;
    if (!(await this.limits.tryConsume('reply', address.to))) return;
    const job: OutboundJob = { to: address.to, text: replyText(this.cfg, facts), kind: facts.kind, channel: address.channel };
    // one reply per chat message, even when its job is retried after queueing it
    const jobId = `r${message.id}`;
    await this.queues.outboundFor(jobId).add('reply', job, { jobId });
  }
}
