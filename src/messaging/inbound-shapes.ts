import { hash } from 'node:crypto';
import { canonicalPhone } from '../identity/phone.js';
import type { InboundMessage } from '../chat/message.js';
import type { HealthReport } from './health.js';

/**
 * The normalised forms of webhook bodies and the helpers both gateways' readers share (see
 * inbound.ts). Turns a gateway's webhook body into internal messages and delivery statuses. Two shapes:
 * Evolution API (one event per request; the event kind is checked before anything else) and
 * Meta's webhooks (`object` + `entry[]`; the WhatsApp Cloud API is `object:
 * whatsapp_business_account`). Anything that is neither a text message from a person nor a
 * status of one of our messages is `ignored` with a reason (answered 200: a retry would bring
 * the same); a body of neither shape is `invalid` (400: it can never succeed). One odd item
 * among a Cloud API batch is ignored as `malformed`, so it does not cost the others.
 * Shapes and their sources: test/fixtures/gateways/README.md.
 */
export type IgnoreReason = 'event-kind' | 'from-me' | 'group' | 'broadcast' | 'status-update' | 'reaction' | 'media' | 'not-text' | 'no-phone' | 'malformed';

/** Where one of our sent messages got to, as the gateway reports it. */
export type DeliveryStatus = 'sent' | 'delivered' | 'read' | 'failed';

/** A status update of a message we sent, by the gateway's id for it on a channel. */
export interface StatusUpdate {
  channel: string;
  gatewayId: string;
  status: DeliveryStatus;
  /** ms since epoch, as the gateway dates it (else when we heard it) */
  at: number;
  /** why it failed, described (e.g. 131047) */
  error?: string;
  /**
   * What the gateway says the message costs (Cloud API `pricing`: billable, category such as
   * `utility` or `service`, pricing model `PMP`, type `regular` / `free_customer_service` /
   * `free_entry_point`); absent when the gateway reports none (Evolution).
   */
  pricing?: { billable: boolean; category: string; model: string; type: string };
}

export type Normalised =
  | {
      kind: 'messages';
      messages: InboundMessage[];
      ignored: IgnoreReason[];
      /** status updates of messages we sent */
      statuses: StatusUpdate[];
      /** status updates of ours that failed at the gateway, described (e.g. 131047) */
      deliveryFailures: string[];
      /** what the gateway said about a number's health (messaging/health.ts) */
      health: HealthReport[];
    }
  | { kind: 'invalid'; reason: string };

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** JID domains of a phone number (`hosted`: a Cloud-hosted business account, Baileys 7). */
const PHONE_DOMAINS = new Set(['s.whatsapp.net', 'c.us', 'hosted']);
const LID_DOMAINS = new Set(['lid', 'hosted.lid']);

/** The user part (device suffix dropped) and domain of a JID; bare digits have domain ''. */
function jidParts(jid: string): { user: string; domain: string } {
  const at = jid.indexOf('@');
  return { user: (at === -1 ? jid : jid.slice(0, at)).split(':')[0]!, domain: at === -1 ? '' : jid.slice(at + 1) };
}

/**
 * The canonical phone (identity/phone.ts) of a WhatsApp user id: a JID
 * (`<digits>[:device]@s.whatsapp.net`, `@c.us`, `@hosted`) or the bare digits the Cloud API
 * gives. Privacy ids (`@lid`), groups and the like give null: a LID never becomes a phone.
 */
export function phoneFromJid(jid: string | null): string | null {
  if (jid === null) return null;
  const { user, domain } = jidParts(jid);
  if (domain !== '' && !PHONE_DOMAINS.has(domain)) return null;
  return /^\+?\d{7,15}$/.test(user) ? canonicalPhone(user) : null;
}

/** The digits of a privacy id (`<n>[:device]@lid`, `@hosted.lid`); null for anything else. */
export function lidFromJid(jid: string | null): string | null {
  if (jid === null) return null;
  const { user, domain } = jidParts(jid);
  return LID_DOMAINS.has(domain) && /^\d{1,32}$/.test(user) ? user : null;
}

/** A short stable digest, so message ids of any length or alphabet make safe Redis keys and job ids. */
export function messageKey(provider: string, scope: string, id: string): string {
  return hash('sha256', `${provider}\0${scope}\0${id}`, 'base64url').slice(0, 22);
}

export interface Collected {
  messages: InboundMessage[];
  ignored: IgnoreReason[];
  statuses: StatusUpdate[];
  deliveryFailures: string[];
  health: HealthReport[];
}

export const collected = (): Collected => ({ messages: [], ignored: [], statuses: [], deliveryFailures: [], health: [] });
export const done = (c: Collected): Normalised => ({ kind: 'messages', ...c });
export const ignoredOne = (reason: IgnoreReason): Normalised => done({ ...collected(), ignored: [reason] });
