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

/** An inbound chat message, normalised from any gateway's payload. */
export interface InboundMessage {
  provider: 'evolution' | 'cloud';
  /** the gateway's message id (Evolution key.id, Cloud API wamid) */
  id: string;
  /** E.164 phone, or null when the sender could not be resolved to one */
  phone: string | null;
  /** message text, or null for non-text messages */
  text: string | null;
  /** sender's display name, as given by the gateway */
  displayName: string | null;
}

export interface InboundJob {
  message: InboundMessage;
  /** unique per accepted webhook: tells a retry of this job from a second delivery */
  nonce: string;
  /** ms since epoch when the webhook was accepted (for latency figures) */
  receivedAt: number;
}

/** The sweep of one expiry second (job id `x-<second>`): runs once that second has ended. */
export interface ExpiryJob {
  /** unix second (Redis clock) in which the registrations it announces expire */
  second: number;
}

export type OutboundKind = 'manual' | 'signed-in' | 'unknown-code';

export interface OutboundJob {
  /** E.164 phone */
  to: string;
  text: string;
  kind: OutboundKind;
  /** user who asked (send-message) */
  userId?: string;
}
