import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { InboundMessage } from '../chat/message.js';
import { USER_PREFIX } from './providers/cloud.js';

/**
 * Where a reply to a chat message goes: the channel it came on (`evolution:<instance>`,
 * `cloud:<phone_number_id>`; the default for a message that names none) and its
 * sender as that gateway knows them: the address it gave (`replyTo`: the number as WhatsApp
 * wrote it, a LID's JID), else the phone, else `user:<id>` for a Cloud API user id, else the
 * LID's JID; null when it has no address. ChatReplies (queues/replies.ts) queues every reply
 * through this.
 */
export function replyAddress(message: InboundMessage, defaultChannel: string): { channel: string; to: string } | null {
  const to =
    message.replyTo ?? message.phone ?? (message.userId !== undefined ? USER_PREFIX + message.userId : message.lid !== undefined ? `${message.lid}@lid` : null);
  return to === null ? null : { channel: message.channel ?? defaultChannel, to };
}

/**
 * The country of a recipient's phone (ISO 3166 alpha-2), `unknown` when the gateway withheld the
 * phone or no country has it: reply counts, costs and daily caps are by country (utility rates are).
 */
export function recipientCountry(phone: string | null): string {
  if (phone === null) return 'unknown';
  return parsePhoneNumberFromString(phone)?.country ?? 'unknown';
}
