import type { InboundMessage } from '../queues/jobs.js';
import { USER_PREFIX } from './providers/cloud.js';

/**
 * Where a reply to a chat message goes: the channel it came on (`evolution:<instance>`,
 * `cloud:<phone_number_id>`; the default for messages queued before channels existed) and its
 * sender (the phone, or `user:<id>` for a Cloud API username-only sender); null when it has no
 * address. ChatReplies (queues/replies.ts) queues every reply through this.
 */
export function replyAddress(message: InboundMessage, defaultChannel: string): { channel: string; to: string } | null {
  const to = message.phone ?? (message.userId !== undefined ? USER_PREFIX + message.userId : null);
  return to === null ? null : { channel: message.channel ?? defaultChannel, to };
}
