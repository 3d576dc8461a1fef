import { hash } from 'node:crypto';
import type { InboundMessage } from '../queues/jobs.js';
import { describeGraphError } from './graph-errors.js';

/**
 * Turns a gateway's webhook body into internal messages. Two shapes: Evolution API (one event
 * per request, `messages.upsert`) and Meta's webhooks (`object` + `entry[]`; the WhatsApp Cloud
 * API is `object: whatsapp_business_account`). Anything that is not a text message from a person
 * with a phone number is `ignored` with a reason (answered 200: a retry would bring the same);
 * a body of neither shape is `invalid` (400: it can never succeed). One odd item among a Cloud
 * API batch is ignored as `malformed`, so it does not cost the other messages their delivery.
 */
export type IgnoreReason =
  | 'event-kind'
  | 'from-me'
  | 'group'
  | 'broadcast'
  | 'status-update'
  | 'reaction'
  | 'media'
  | 'not-text'
  | 'no-phone'
  | 'malformed';

export type Normalised =
  | {
      kind: 'messages';
      messages: InboundMessage[];
      ignored: IgnoreReason[];
      /** Cloud API status updates of ours that failed at the gateway, described (e.g. 131047) */
      deliveryFailures: string[];
    }
  | { kind: 'invalid'; reason: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

const PHONE_DIGITS = /^\d{7,15}$/;

/**
 * `+digits` from a WhatsApp user id: a JID (`<digits>[:device]@s.whatsapp.net`, or `@c.us`) or
 * the bare digits the Cloud API gives. Privacy ids (`@lid`), groups and the like give null.
 */
export function phoneFromJid(jid: string | null): string | null {
  if (jid === null) return null;
  const at = jid.indexOf('@');
  const domain = at === -1 ? '' : jid.slice(at + 1);
  if (at !== -1 && domain !== 's.whatsapp.net' && domain !== 'c.us') return null;
  const digits = (at === -1 ? jid : jid.slice(0, at)).split(':')[0]!.replace(/^\+/, '');
  return PHONE_DIGITS.test(digits) ? '+' + digits : null;
}

/** A short stable digest, so message ids of any length or alphabet make safe Redis keys and job ids. */
export function messageKey(provider: string, scope: string, id: string): string {
  return hash('sha256', `${provider}\0${scope}\0${id}`, 'base64url').slice(0, 22);
}

const messages = (list: InboundMessage[], ignored: IgnoreReason[] = [], deliveryFailures: string[] = []): Normalised => ({
  kind: 'messages',
  messages: list,
  ignored,
  deliveryFailures,
});
const ignoredOne = (reason: IgnoreReason): Normalised => messages([], [reason]);

// ---- Evolution API (Baileys message objects) ----

const EVOLUTION_MEDIA = [
  'imageMessage',
  'videoMessage',
  'audioMessage',
  'documentMessage',
  'documentWithCaptionMessage',
  'stickerMessage',
  'ptvMessage',
  'locationMessage',
  'liveLocationMessage',
  'contactMessage',
  'contactsArrayMessage',
];

/** Text of a Baileys message, unwrapping disappearing-message chats; else why it is not text. */
function evolutionText(message: Obj): { text: string } | { ignore: IgnoreReason } {
  const inner = isObj(message.ephemeralMessage) && isObj(message.ephemeralMessage.message) ? message.ephemeralMessage.message : message;
  const text = str(inner.conversation) ?? (isObj(inner.extendedTextMessage) ? str(inner.extendedTextMessage.text) : null);
  if (text !== null) return { text };
  if (inner.reactionMessage !== undefined) return { ignore: 'reaction' };
  return { ignore: EVOLUTION_MEDIA.some((k) => inner[k] !== undefined) ? 'media' : 'not-text' };
}

/** A message without an id is known by a digest of its data; null when the data can't be serialised (nested too deeply). */
function contentId(data: Obj): string | null {
  try {
    return hash('sha256', JSON.stringify(data), 'hex');
  } catch {
    return null;
  }
}

function normaliseEvolution(body: Obj): Normalised {
  const event = str(body.event);
  const data = body.data;
  if (event === null || typeof body.instance !== 'string' || !isObj(data)) {
    return { kind: 'invalid', reason: 'Evolution event needs event, instance and data' };
  }
  // `messages.upsert`, or `MESSAGES_UPSERT` as the global webhook may name it
  if (event.toLowerCase().replace(/_/g, '.') !== 'messages.upsert') return ignoredOne('event-kind');
  const key = data.key;
  if (!isObj(key) || typeof key.remoteJid !== 'string' || typeof key.fromMe !== 'boolean') {
    return { kind: 'invalid', reason: 'data.key.remoteJid (string) and data.key.fromMe (boolean) are required' };
  }
  if (key.fromMe) return ignoredOne('from-me');
  const jid = key.remoteJid;
  if (jid.endsWith('@g.us')) return ignoredOne('group');
  if (jid.endsWith('@broadcast') || jid.endsWith('@newsletter')) return ignoredOne('broadcast');

  const content = evolutionText(isObj(data.message) ? data.message : {});
  if ('ignore' in content) return ignoredOne(content.ignore);

  // A privacy id (`<n>@lid`) carries no phone: Evolution gives it beside (remoteJidAlt; senderPn before v2.3).
  const phone = jid.endsWith('@lid')
    ? phoneFromJid(str(key.remoteJidAlt) ?? str(key.senderPn) ?? str(data.senderPn))
    : phoneFromJid(jid);
  if (phone === null) return ignoredOne('no-phone');

  const rawId = str(key.id) ?? contentId(data);
  if (rawId === null) return { kind: 'invalid', reason: 'data is nested too deeply' };
  return messages([
    { provider: 'evolution', id: messageKey('evolution', body.instance, rawId), phone, text: content.text, displayName: str(data.pushName) },
  ]);
}

// ---- Meta webhooks (WhatsApp Cloud API) ----

const CLOUD_MEDIA = new Set(['image', 'video', 'audio', 'document', 'sticker', 'location', 'contacts']);

function cloudMessage(m: unknown, contacts: Obj[]): InboundMessage | IgnoreReason {
  if (!isObj(m) || typeof m.id !== 'string') return 'malformed';
  // Cloud API groups: the sender is a participant of a group chat, not someone signing in
  if (m.group_id !== undefined) return 'group';
  if (m.type === 'reaction') return 'reaction';
  if (typeof m.type === 'string' && CLOUD_MEDIA.has(m.type)) return 'media';
  const text = m.type === 'text' && isObj(m.text) ? str(m.text.body) : null;
  if (text === null) return 'not-text';
  // A user with a username may come with a business-scoped user id only, no phone number.
  const from = str(m.from);
  const phone = phoneFromJid(from);
  if (phone === null) return 'no-phone';
  const contact = contacts.find((c) => c.wa_id === from) ?? (contacts.length === 1 ? contacts[0] : undefined);
  const profile = contact && isObj(contact.profile) ? contact.profile : {};
  return { provider: 'cloud', id: messageKey('cloud', '', m.id), phone, text, displayName: str(profile.name) };
}

/** Status updates of messages we sent: only failures matter, and only their description. */
function cloudStatuses(statuses: unknown[], failures: string[]): void {
  for (const s of statuses) {
    if (!isObj(s) || s.status !== 'failed' || !Array.isArray(s.errors)) continue;
    for (const e of s.errors) if (isObj(e)) failures.push(describeGraphError(e));
  }
}

function normaliseMeta(body: Obj, entries: unknown[]): Normalised {
  // Another Meta product subscribed to the same URL (Instagram, Messenger): not ours, but valid.
  if (body.object !== 'whatsapp_business_account') return ignoredOne('event-kind');
  const list: InboundMessage[] = [];
  const ignored: IgnoreReason[] = [];
  const failures: string[] = [];
  for (const entry of entries) {
    if (!isObj(entry) || !Array.isArray(entry.changes)) {
      ignored.push('malformed');
      continue;
    }
    for (const change of entry.changes) {
      if (!isObj(change) || !isObj(change.value)) ignored.push('malformed');
      else if (change.field !== undefined && change.field !== 'messages') ignored.push('event-kind');
      else {
        const value = change.value;
        if (Array.isArray(value.statuses) && value.statuses.length > 0) {
          ignored.push('status-update');
          cloudStatuses(value.statuses, failures);
        }
        if (!Array.isArray(value.messages)) continue;
        const contacts = Array.isArray(value.contacts) ? value.contacts.filter(isObj) : [];
        for (const m of value.messages) {
          const one = cloudMessage(m, contacts);
          if (typeof one === 'string') ignored.push(one);
          else list.push(one);
        }
      }
    }
  }
  return messages(list, ignored, failures);
}

export function normaliseWebhook(body: unknown): Normalised {
  if (!isObj(body)) return { kind: 'invalid', reason: 'The body must be a JSON object' };
  if (typeof body.object === 'string' && Array.isArray(body.entry)) return normaliseMeta(body, body.entry);
  if (body.object === 'whatsapp_business_account') return { kind: 'invalid', reason: 'Cloud API notification needs entry[]' };
  if ('event' in body || 'data' in body || 'instance' in body) return normaliseEvolution(body);
  return { kind: 'invalid', reason: 'Neither an Evolution API event nor a WhatsApp Cloud API notification' };
}
