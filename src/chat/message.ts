/**
 * A chat message as it travels: the one that came in, normalised from any gateway's payload, and
 * the kinds of answer that go out. The queues carry them (src/queues/jobs.ts), the gateways
 * write them (src/messaging/), the login reads them (src/auth/login.ts): they live here, below all three.
 */
import type { ReplyKind } from '../chat-catalogue.js';

/** An inbound chat message, normalised from any gateway's payload. */
export interface InboundMessage {
  provider: 'evolution' | 'cloud';
  /** digest of the gateway's message id (Evolution key.id scoped by instance, Cloud API wamid) */
  id: string;
  /**
   * The channel it came on (`evolution:<instance>`, `cloud:<phone_number_id>`): every reply to
   * it goes out on the same one. Absent when the webhook named none (a Cloud API body without a
   * usable `metadata.phone_number_id`): the default.
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
  /**
   * An identifier change (`user_changed_number`, `user_changed_user_id`; text null): `phone` is
   * the new number (null when the number did not change), `previousPhone` the old one when
   * given, `userId` the old BSUID, `newUserId` the BSUID the change gives
   */
  numberChanged?: boolean;
  previousPhone?: string;
  newUserId?: string;
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
  /** ms since epoch when the webhook was accepted (latency figures; a chat answer answers only questions asked before it, so a retry or replay keeps it) */
  receivedAt: number;
}

/** Why a message goes out: asked for through /send-message, or a reply to a chat message. */
export type OutboundKind = 'manual' | ReplyKind;

/** A reply button where the gateway shows them (Cloud API): its id comes back in the button's answer. */
export interface ChatButton {
  id: string;
  /** at most 20 characters */
  title: string;
}
