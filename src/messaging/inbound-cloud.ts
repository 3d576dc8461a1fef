import type { InboundMessage } from '../queues/jobs.js';
import { describeGraphError } from './graph-errors.js';
import {
  collected,
  done,
  ignoredOne,
  isObj,
  messageKey,
  phoneFromJid,
  str,
  type Collected,
  type DeliveryStatus,
  type IgnoreReason,
  type Normalised,
  type Obj,
} from './inbound-shapes.js';

/**
 * Meta's webhooks for the WhatsApp Cloud API: `entry[].changes[].value` with `messages[]`
 * (text; `type: "edit"` with the new text under `edit.message`) and `statuses[]` (sent,
 * delivered, read, failed) of ours. The channel is the business number the message was sent to,
 * `cloud:<metadata.phone_number_id>`. A sender who hides the phone behind a username comes with
 * `from_user_id` (a business-scoped user id) and no `from`: the phone is taken from the
 * matching `contacts[]` entry when Meta still gives it (`wa_id`), else the message goes on with
 * `userId` and no phone (the worker answers it: see docs/gateways.md, "Username-only senders").
 */

const MEDIA = new Set(['image', 'video', 'audio', 'document', 'sticker', 'location', 'contacts']);
const STATUSES = new Set<DeliveryStatus>(['sent', 'delivered', 'read', 'failed']);

/** The text of a text message or of an edit's new version; else why not. */
function textOf(m: Obj): { text: string; editOf?: string } | IgnoreReason {
  if (m.type === 'edit' && isObj(m.edit)) {
    const inner = isObj(m.edit.message) ? m.edit.message : {};
    const original = str(m.edit.original_message_id);
    const text = isObj(inner.text) ? str(inner.text.body) : null;
    if (text === null || original === null) return 'not-text';
    return { text, editOf: messageKey('cloud', '', original) };
  }
  if (m.type === 'reaction') return 'reaction';
  if (typeof m.type === 'string' && MEDIA.has(m.type)) return 'media';
  const text = m.type === 'text' && isObj(m.text) ? str(m.text.body) : null;
  return text === null ? 'not-text' : { text };
}

function cloudMessage(m: unknown, contacts: Obj[], channel: string | undefined): InboundMessage | IgnoreReason {
  if (!isObj(m) || typeof m.id !== 'string') return 'malformed';
  // Cloud API groups: the sender is a participant of a group chat, not someone signing in
  if (m.group_id !== undefined) return 'group';
  const content = textOf(m);
  if (typeof content === 'string') return content;
  const from = str(m.from);
  const userId = str(m.from_user_id);
  const contact = contacts.find((c) => (from !== null && c.wa_id === from) || (userId !== null && c.user_id === userId)) ?? (contacts.length === 1 ? contacts[0] : undefined);
  const phone = phoneFromJid(from) ?? phoneFromJid(contact ? str(contact.wa_id) : null);
  if (phone === null && userId === null) return 'no-phone';
  const profile = contact && isObj(contact.profile) ? contact.profile : {};
  const one: InboundMessage = { provider: 'cloud', id: messageKey('cloud', '', m.id), phone, text: content.text, displayName: str(profile.name) };
  if (channel !== undefined) one.channel = channel;
  if (phone === null && userId !== null) one.userId = userId;
  if (content.editOf !== undefined) one.editOf = content.editOf;
  return one;
}

/** Status updates of messages we sent: tracked by their wamid; failures described. */
function cloudStatuses(statuses: unknown[], channel: string | undefined, out: Collected): void {
  for (const s of statuses) {
    if (!isObj(s)) continue;
    const status = str(s.status) as DeliveryStatus | null;
    const errors = Array.isArray(s.errors) ? s.errors.filter(isObj) : [];
    const error = errors.length > 0 ? errors.map((e) => describeGraphError(e)).join('; ') : undefined;
    if (status === 'failed' && error !== undefined) out.deliveryFailures.push(error);
    if (channel === undefined || typeof s.id !== 'string' || status === null || !STATUSES.has(status)) continue;
    const seconds = Number(s.timestamp);
    out.statuses.push({ channel, gatewayId: s.id, status, at: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now(), ...(error ? { error } : {}) });
  }
}

export function normaliseCloud(body: Obj, entries: unknown[]): Normalised {
  // Another Meta product subscribed to the same URL (Instagram, Messenger): not ours, but valid.
  if (body.object !== 'whatsapp_business_account') return ignoredOne('event-kind');
  const out = collected();
  for (const entry of entries) {
    if (!isObj(entry) || !Array.isArray(entry.changes)) {
      out.ignored.push('malformed');
      continue;
    }
    for (const change of entry.changes) {
      if (!isObj(change) || !isObj(change.value)) out.ignored.push('malformed');
      else if (change.field !== undefined && change.field !== 'messages') out.ignored.push('event-kind');
      else {
        const value = change.value;
        const pnid = isObj(value.metadata) ? str(value.metadata.phone_number_id) : null;
        const channel = pnid !== null && /^\d{1,32}$/.test(pnid) ? `cloud:${pnid}` : undefined;
        if (Array.isArray(value.statuses) && value.statuses.length > 0) {
          out.ignored.push('status-update');
          cloudStatuses(value.statuses, channel, out);
        }
        if (!Array.isArray(value.messages)) continue;
        const contacts = Array.isArray(value.contacts) ? value.contacts.filter(isObj) : [];
        for (const m of value.messages) {
          const one = cloudMessage(m, contacts, channel);
          if (typeof one === 'string') out.ignored.push(one);
          else out.messages.push(one);
        }
      }
    }
  }
  return done(out);
}
