import type { HealthReport } from './health.js';
import type { InboundMessage } from '../chat/message.js';
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
 * `cloud:<metadata.phone_number_id>`. The sender is known by a business-scoped user id (BSUID:
 * `from_user_id`, `contacts[].user_id`) and, unless Meta withholds it, the phone (`from`,
 * `contacts[].wa_id`); either signs in (src/identity). `profile.username` is kept for display.
 * A `user_changed_number` system message (the new number in `system.wa_id`, and since 2026 the
 * new BSUID in `system.user_id` beside the old one in `system.previous_user_id`) moves the account
 * to the new number and links it to the new BSUID; a `user_changed_user_id` (a BSUID change, no
 * number) links the new BSUID. The old identifiers are the message's `from` / `from_user_id`.
 * A press of one of
 * the question's reply buttons (`type: "interactive"`, `interactive.button_reply.id`; a template's
 * quick reply: `type: "button"`, `button.payload`) whose id is `yes:<n>` / `no:<n>` reads as the
 * typed "YES <n>" / "NO <n>": it answers exactly the question it came with.
 */

const MEDIA = new Set(['image', 'video', 'audio', 'document', 'sticker', 'location', 'contacts']);
const STATUSES = new Set<DeliveryStatus>(['sent', 'delivered', 'read', 'failed']);

/** A button id of the question (chat/texts.ts confirmButtons) as the typed answer it stands for. */
const BUTTON_ID = /^(yes|no):(\d{2})$/;
function buttonAnswer(id: string | null): string | null {
  const m = id === null ? null : BUTTON_ID.exec(id);
  return m ? `${m[1]!.toUpperCase()} ${m[2]!}` : null;
}

/** The id of a pressed reply button (interactive `button_reply`, or a template's quick-reply `button`), else null. */
function buttonIdOf(m: Obj): string | null {
  if (m.type === 'interactive' && isObj(m.interactive) && m.interactive.type === 'button_reply' && isObj(m.interactive.button_reply)) {
    return str(m.interactive.button_reply.id);
  }
  if (m.type === 'button' && isObj(m.button)) return str(m.button.payload);
  return null;
}

/** The text of a text message or of an edit's new version, or the answer a button stands for; else why not. */
function textOf(m: Obj): { text: string; editOf?: string } | IgnoreReason {
  if (m.type === 'interactive' || m.type === 'button') {
    const answer = buttonAnswer(buttonIdOf(m));
    return answer === null ? 'not-text' : { text: answer };
  }
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

/** What an identifier change gives. */
interface IdChange {
  /** the new number (`system.wa_id`; `new_wa_id` in older versions), null for a BSUID change */
  number: string | null;
  /** the new BSUID, null when the change names none */
  userId: string | null;
  /** the old BSUID (`system.previous_user_id`), null when not named there */
  previousUserId: string | null;
}

/**
 * An identifier change (`user_changed_number`, `customer_changed_number` in older versions,
 * `user_changed_user_id`), else null; 'not-text' for one that names nothing new. The new BSUID is
 * `system.user_id`; a payload naming only `previous_user_id` has the new one in `from_user_id`.
 */
function changeOf(m: Obj): IdChange | 'not-text' | null {
  if (m.type !== 'system' || !isObj(m.system)) return null;
  const kind = str(m.system.type);
  const numberChange = kind === 'user_changed_number' || kind === 'customer_changed_number';
  if (!numberChange && kind !== 'user_changed_user_id') return null;
  const previousUserId = str(m.system.previous_user_id);
  const fromUserId = str(m.from_user_id);
  const userId = str(m.system.user_id) ?? (previousUserId !== null && fromUserId !== previousUserId ? fromUserId : null);
  const number = numberChange ? (str(m.system.wa_id) ?? str(m.system.new_wa_id)) : null;
  if (numberChange ? number === null : userId === null) return 'not-text';
  return { number, userId, previousUserId };
}

function cloudMessage(m: unknown, contacts: Obj[], channel: string | undefined): InboundMessage | IgnoreReason {
  if (!isObj(m) || typeof m.id !== 'string') return 'malformed';
  // Cloud API groups: the sender is a participant of a group chat, not someone signing in
  if (m.group_id !== undefined) return 'group';
  const change = changeOf(m);
  if (change === 'not-text') return change;
  const content = change !== null ? { text: null } : textOf(m);
  if (typeof content === 'string') return content;
  const from = str(m.from);
  const contact =
    contacts.find((c) => (from !== null && c.wa_id === from) || (typeof m.from_user_id === 'string' && c.user_id === m.from_user_id)) ??
    (contacts.length === 1 ? contacts[0] : undefined);
  const userId = change?.previousUserId ?? str(m.from_user_id) ?? (contact ? str(contact.user_id) : null);
  const waId = from ?? (contact ? str(contact.wa_id) : null);
  let phone = phoneFromJid(waId);
  const previous = change !== null ? phone : null;
  if (change !== null) {
    // the old identifiers find the account: a change naming none of them moves nothing
    phone = change.number !== null ? phoneFromJid(change.number) : null;
    if ((change.number !== null && phone === null) || (previous === null && userId === null)) return 'not-text';
  }
  if (phone === null && userId === null) return 'no-phone';
  const profile = contact && isObj(contact.profile) ? contact.profile : {};
  const one: InboundMessage = { provider: 'cloud', id: messageKey('cloud', '', m.id), phone, text: content.text, displayName: str(profile.name) };
  if (channel !== undefined) one.channel = channel;
  if (userId !== null) one.userId = userId;
  const username = str(profile.username);
  if (username !== null && username !== '') one.username = username;
  // replies go to the number as WhatsApp wrote it (a Mexican wa_id keeps its 521)
  if (change === null && waId !== null && phone !== null && waId !== phone.slice(1)) one.replyTo = waId;
  if (change !== null) one.numberChanged = true;
  if (change !== null && change.userId !== null && change.userId !== userId) one.newUserId = change.userId;
  if (previous !== null) one.previousPhone = previous;
  if ('editOf' in content && content.editOf !== undefined) one.editOf = content.editOf;
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
    const p = isObj(s.pricing) ? s.pricing : null;
    const pricing =
      p && typeof p.billable === 'boolean'
        ? { billable: p.billable, category: str(p.category) ?? 'unknown', model: str(p.pricing_model) ?? 'unknown', type: str(p.type) ?? 'unknown' }
        : null;
    out.statuses.push({
      channel,
      gatewayId: s.id,
      status,
      at: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now(),
      ...(error ? { error } : {}),
      ...(pricing ? { pricing } : {}),
    });
  }
}

/** Quality events that take a number out of rotation, and those that bring it back. */
const QUALITY_DOWN = new Set(['FLAGGED', 'DOWNGRADE']);
const QUALITY_UP = new Set(['UNFLAGGED', 'UPGRADE']);
/** account_update events that stop a number sending, and those that lift it. */
const ACCOUNT_DOWN = new Set(['DISABLED_UPDATE', 'ACCOUNT_RESTRICTION', 'ACCOUNT_VIOLATION', 'ACCOUNT_DELETED']);

/**
 * `phone_number_quality_update` `{display_phone_number, event, current_limit}` and
 * `account_update` `{phone_number, event, ban_info: {waba_ban_state}, restriction_info}`: both
 * name the number by its digits only. A ban state of REINSTATE, or a restriction event with no
 * restrictions left, brings it back; other events (onboarding, partner changes) say nothing of health.
 */
function cloudHealth(field: string, v: Obj): HealthReport | null {
  const event = str(v.event) ?? '';
  const displayNumber = str(v.display_phone_number) ?? str(v.phone_number);
  if (displayNumber === null) return null;
  if (field === 'phone_number_quality_update') {
    const limit = str(v.current_limit);
    const reason = limit === null ? event : `${event} ${limit}`;
    if (QUALITY_DOWN.has(event)) return { displayNumber, healthy: false, reason };
    if (QUALITY_UP.has(event)) return { displayNumber, healthy: true, reason };
    return null;
  }
  const ban = isObj(v.ban_info) ? str(v.ban_info.waba_ban_state) : null;
  if (ban === 'REINSTATE') return { displayNumber, healthy: true, reason: `${event} REINSTATE` };
  if (ban !== null) return { displayNumber, healthy: false, reason: `${event} ${ban}` };
  if (event === 'ACCOUNT_RESTRICTION' && Array.isArray(v.restriction_info) && v.restriction_info.length === 0) {
    return { displayNumber, healthy: true, reason: event };
  }
  if (ACCOUNT_DOWN.has(event)) return { displayNumber, healthy: false, reason: event };
  return null;
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
      else if (change.field === 'phone_number_quality_update' || change.field === 'account_update') {
        out.ignored.push('status-update');
        const report = cloudHealth(change.field, change.value);
        if (report !== null) out.health.push(report);
      } else if (change.field !== undefined && change.field !== 'messages') out.ignored.push('event-kind');
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
