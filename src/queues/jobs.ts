import type { ChatButton, OutboundKind } from '../chat/message.js';

/**
 * Queue names and the data each job carries. Job data is shown on the dashboard, so it never
 * holds a PIN or a token: registrations are referred to by pinId and PIN hash.
 */
export const QUEUE = {
  inbound: 'inbound',
  expiry: 'expiry',
  outbound: 'outbound',
} as const;
export type QueueName = (typeof QUEUE)[keyof typeof QUEUE];

/** The inbound queue's payload and the reply kinds are chat's ideas (src/chat/message.ts), which auth and messaging below the queues use too. */
export type { InboundJob, InboundMessage, OutboundKind } from '../chat/message.js';

/** The sweep of one expiry second (job id `x-<second>`): runs once that second has ended. */
export interface ExpiryJob {
  /** unix second (Redis clock) in which the registrations it announces expire */
  second: number;
}

export interface OutboundJob {
  /** E.164 phone, `user:<id>` for a Cloud API business-scoped user id, or a chat JID (`<n>@lid`) */
  to: string;
  text: string;
  kind: OutboundKind;
  /** user who asked (send-message) */
  userId?: string;
  /** channel to send on (`evolution:<instance>`, `cloud:<phone_number_id>`, `log`); absent: the default */
  channel?: string;
  /** reply buttons, shown where the gateway has them (Cloud API); elsewhere the text alone goes */
  buttons?: ChatButton[];
  /** the recipient's country (ISO 3166 alpha-2, or `unknown`): reply counts and costs are by country */
  country?: string;
}
