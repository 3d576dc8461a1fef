import type { InboundMessage } from '../chat/message.js';
import type { SenderCountries } from '../config.js';
import { recipientCountry } from '../messaging/reply.js';
import type { Limits } from '../security/limits.js';

/** Why a sender's message does nothing: past its budget (and whether they are told now), or from a country not served. */
export type SenderRefusal = { reason: 'slowed'; tell: boolean; country: string } | { reason: 'country'; country: string };

/** A BSUID's country prefix (`US.13491208655302741918`): two letters, then a period. */
const BSUID_COUNTRY = /^([A-Z]{2})\./;

/**
 * The sender's country (ISO 3166 alpha-2): the phone's, else the BSUID's prefix when it carries
 * one; `unknown` otherwise (a LID alone says nothing of it).
 */
export function senderCountry(message: Pick<InboundMessage, 'phone' | 'userId'>): string {
  if (message.phone !== null) return recipientCountry(message.phone);
  return (message.userId !== undefined ? BSUID_COUNTRY.exec(message.userId)?.[1] : undefined) ?? 'unknown';
}

/** The sender's budget key: the phone, else the LID, else the BSUID; null when the gateway named none. */
function senderKey(message: Pick<InboundMessage, 'phone' | 'lid' | 'userId'>): string | null {
  if (message.phone !== null) return `p:${message.phone}`;
  if (message.lid !== undefined) return `l:${message.lid}`;
  if (message.userId !== undefined) return `u:${message.userId}`;
  return null;
}

/**
 * The per-sender rules, checked before a chat message does anything (docs/security.md,
 * "Senders"): each sender's text messages (codes, answers, commands) spend one budget,
 * SENDER_MESSAGES_PER_MINUTE, and past it do nothing until the minute is over; a sender whose
 * country SENDER_COUNTRIES_ALLOW leaves out or SENDER_COUNTRIES_DENY names signs nobody in.
 * Undefined: the message goes on.
 */
export async function refuseSender(
  limits: Limits,
  /** `budget`: SENDER_MESSAGES_PER_MINUTE is on (its points are the limiter's, limits.ts) */
  rules: { budget: boolean; countries: SenderCountries | undefined },
  message: InboundMessage,
): Promise<SenderRefusal | undefined> {
  // a number change (a system webhook) or a picture is no attempt to sign in
  if (message.text === null || message.numberChanged === true) return undefined;
  const key = senderKey(message);
  if (key === null) return undefined;
  if (rules.budget) {
    const spent = await limits.spend('sender', key);
    if (spent !== 'spent') return { reason: 'slowed', tell: spent === 'first-refusal', country: senderCountry(message) };
  }
  const list = rules.countries;
  if (list === undefined) return undefined;
  // the number is parsed for its country only when a rule needs it
  const country = senderCountry(message);
  if (list.countries.has(country) !== (list.mode === 'allow')) return { reason: 'country', country };
  return undefined;
}
