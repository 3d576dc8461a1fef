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
  /** digest of the gateway's message id (Evolution key.id scoped by instance, Cloud API wamid) */
  id: string;
  /**
   * The channel it came on (`evolution:<instance>`, `cloud:<phone_number_id>`): every reply to
   * it goes out on the same one. Absent in jobs queued before channels existed: the default.
   */
  channel?: string;
  /** canonical E.164 phone (src/identity/phone.ts), or null when the gateway withheld it */
  phone: string | null;
  /** Cloud API business-scoped user id (BSUID, `contacts[].user_id`): a stable identifier */
  userId?: string;
  /** WhatsApp LID (digits of `…@lid`, Evolution / Baileys): a stable identifier */
  lid?: string;
  /** the sender's WhatsApp username, shown on the account, never used to find it */
  username?: string;
  /**
   * Where a reply goes when not to `phone`: the gateway's own address of the sender (a LID JID,
   * the digits as WhatsApp wrote them, `user:<BSUID>`); absent: the phone, else `user:<userId>`
   */
  replyTo?: string;
  /** a `user_changed_number`: `phone` is the new number, `previousPhone` the old one when given; text null */
  numberChanged?: boolean;
  previousPhone?: string;
  /** message text, or null for non-text messages */
  text: string | null;
  /** sender's display name, as given by the gateway */
  displayName: string | null;
  /** an edit: the id digest of the message it replaces (a new attempt with the edited text) */
  editOf?: string;
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

/** Why a message goes out: asked for through /send-message, or a reply to a chat message. */
export type OutboundKind = 'manual' | 'signed-in' | 'unknown-code' | 'confirm' | 'which-one' | 'denied' | 'nothing-to-confirm' | 'signed-out' | 'cannot-sign-in';

export interface OutboundJob {
  /** E.164 phone, `user:<id>` for a Cloud API business-scoped user id, or a chat JID (`<n>@lid`) */
  to: string;
  text: string;
  kind: OutboundKind;
  /** user who asked (send-message) */
  userId?: string;
  /** channel to send on (`evolution:<instance>`, `cloud:<phone_number_id>`, `log`); absent: the default */
  channel?: string;
}
