import { hash } from 'node:crypto';
import type { InboundMessage } from '../chat/message.js';
import {
  collected,
  done,
  ignoredOne,
  isObj,
  lidFromJid,
  messageKey,
  phoneFromJid,
  str,
  type DeliveryStatus,
  type IgnoreReason,
  type Normalised,
  type Obj,
} from './inbound-shapes.js';

/**
 * Evolution API events (v1 and v2: 2.1 to 2.3.x; Baileys message objects inside). The event
 * kind is read first, so events not for us are ignored whatever their data (many carry arrays):
 * - `messages.upsert`: a chat message (an edit made on the phone may come this way too);
 * - `messages.edited`: an edit; its `key` is the original message's, and Evolution gives it from
 *   the editor's side (`fromMe: true`, `remoteJid` our own number), so when it does not name the
 *   sender the worker takes the sender of the original message;
 * - `messages.update`: status changes of our messages (and, in Baileys' raw form, edits);
 * - `send.message`: Evolution's acknowledgement of a message we sent.
 * The channel of everything is `evolution:<instance>`.
 */

/** `messages.upsert`, also as the global webhook or the by-events path name it (`MESSAGES_UPSERT`, `messages-upsert`). */
export const evolutionEventName = (event: string): string => event.toLowerCase().replace(/[_-]/g, '.');

const MEDIA = [
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
function textOf(message: Obj): { text: string } | { ignore: IgnoreReason } {
  const inner = isObj(message.ephemeralMessage) && isObj(message.ephemeralMessage.message) ? message.ephemeralMessage.message : message;
  const text = str(inner.conversation) ?? (isObj(inner.extendedTextMessage) ? str(inner.extendedTextMessage.text) : null);
  if (text !== null) return { text };
  if (inner.reactionMessage !== undefined) return { ignore: 'reaction' };
  return { ignore: MEDIA.some((k) => inner[k] !== undefined) ? 'media' : 'not-text' };
}

/**
 * The protocol message of an edit, wherever a version puts it: the event's data itself
 * (`messages.edited`), `message.protocolMessage`, or `message.editedMessage.message.protocolMessage`.
 */
function editProtocol(m: Obj): Obj | null {
  const candidates = [
    m,
    isObj(m.protocolMessage) ? m.protocolMessage : null,
    isObj(m.editedMessage) && isObj(m.editedMessage.message) && isObj(m.editedMessage.message.protocolMessage) ? m.editedMessage.message.protocolMessage : null,
  ];
  for (const c of candidates) if (c && isObj(c.key) && typeof c.key.id === 'string' && isObj(c.editedMessage)) return c;
  return null;
}

/** A message without an id is known by a digest of its data; null when the data can't be serialised (nested too deeply). */
function contentId(data: Obj): string | null {
  try {
    return hash('sha256', JSON.stringify(data), 'hex');
  } catch {
    return null;
  }
}

/** Who sent a message: the identifiers of its key and where a reply to them goes. */
type Sender = Pick<InboundMessage, 'phone' | 'lid' | 'username' | 'replyTo'>;

/**
 * The sender of a chat: `remoteJid` is a phone JID or a privacy id (`<n>@lid`), and the other
 * one may come beside it: `remoteJidAlt` (Baileys 7, Evolution 2.3+; a LID beside a phone JID
 * too), `senderPn` / `senderLid` (Baileys 6.7, Evolution 2.2), `remoteJidUsername` (Baileys 7).
 * A reply goes to the phone as WhatsApp wrote it when there is one, else to the LID's JID
 * (Evolution sends to a `…@lid` number as it is). Null: no identifier at all.
 */
function senderOf(key: Obj, data: Obj): Sender | null {
  const jids = [key.remoteJid, key.remoteJidAlt, key.senderPn, data.senderPn, key.senderLid, data.senderLid].map(str);
  let phone: string | null = null;
  let phoneJid: string | null = null;
  let lid: string | null = null;
  let lidJid: string | null = null;
  for (const jid of jids) {
    if (phone === null) {
      phone = phoneFromJid(jid);
      if (phone !== null) phoneJid = jid;
    }
    if (lid === null) {
      lid = lidFromJid(jid);
      if (lid !== null) lidJid = jid;
    }
  }
  if (phone === null && lid === null) return null;
  const sender: Sender = { phone };
  if (lid !== null) sender.lid = lid;
  const username = str(key.remoteJidUsername) ?? str(data.remoteJidUsername);
  if (username !== null && username !== '') sender.username = username;
  const replyTo = phoneJid !== null ? phoneJid.split('@')[0]!.split(':')[0]! : lidJid!.replace(/:\d+@/, '@');
  if (replyTo.replace(/^\+/, '') !== phone?.slice(1)) sender.replyTo = replyTo;
  return sender;
}

/** Groups, status stories and channels are not a person signing in. */
function notAChat(jid: string): IgnoreReason | null {
  if (jid.endsWith('@g.us')) return 'group';
  if (jid.endsWith('@broadcast') || jid.endsWith('@newsletter')) return 'broadcast';
  return null;
}

function upsert(data: unknown, instance: string, channel: string): Normalised {
  if (!isObj(data)) return { kind: 'invalid', reason: 'Evolution event needs event, instance and data' };
  const key = data.key;
  if (!isObj(key) || typeof key.remoteJid !== 'string' || typeof key.fromMe !== 'boolean') {
    return { kind: 'invalid', reason: 'data.key.remoteJid (string) and data.key.fromMe (boolean) are required' };
  }
  if (key.fromMe) return ignoredOne('from-me');
  const other = notAChat(key.remoteJid);
  if (other) return ignoredOne(other);

  const message = isObj(data.message) ? data.message : {};
  const edit = editProtocol(message);
  const content = textOf(edit ? (edit.editedMessage as Obj) : message);
  if ('ignore' in content) return ignoredOne(content.ignore);
  const sender = senderOf(key, data);
  if (sender === null) return ignoredOne('no-phone');

  const rawId = str(key.id) ?? contentId(data);
  if (rawId === null) return { kind: 'invalid', reason: 'data is nested too deeply' };
  const one: InboundMessage = {
    provider: 'evolution',
    id: messageKey('evolution', instance, rawId),
    channel,
    ...sender,
    text: content.text,
    displayName: str(data.pushName),
  };
  if (edit) one.editOf = messageKey('evolution', instance, (edit.key as Obj).id as string);
  return done({ ...collected(), messages: [one] });
}

function edited(data: unknown, instance: string, channel: string): Normalised {
  const edit = isObj(data) ? (editProtocol(data) ?? (isObj(data.message) ? editProtocol(data.message) : null)) : null;
  if (edit === null) return ignoredOne('not-text');
  const key = edit.key as Obj;
  const jid = str(key.remoteJid) ?? '';
  const other = notAChat(jid);
  if (other) return ignoredOne(other);
  const content = textOf(edit.editedMessage as Obj);
  if ('ignore' in content) return ignoredOne(content.ignore);
  const originalId = key.id as string;
  // named only when Evolution gives the sender's side; else the worker takes the original's sender
  const sender = key.fromMe === false ? senderOf(key, isObj(data) ? data : {}) : null;
  // each edit of a message is its own attempt; a redelivery of the same edit is not
  const stamp = typeof edit.timestampMs === 'number' || typeof edit.timestampMs === 'string' ? String(edit.timestampMs) : (contentId(edit) ?? '');
  return done({
    ...collected(),
    messages: [
      {
        provider: 'evolution',
        id: messageKey('evolution', instance, `edit\0${originalId}\0${stamp}`),
        channel,
        ...(sender ?? { phone: null }),
        text: content.text,
        displayName: null,
        editOf: messageKey('evolution', instance, originalId),
      },
    ],
  });
}

/** Evolution's message statuses (names in 2.x, Baileys' numbers in 1.x) as ours; null for no progress to record. */
const STATUS: Record<string, DeliveryStatus | null> = {
  ERROR: 'failed',
  PENDING: 'sent',
  SERVER_ACK: 'sent',
  DELIVERY_ACK: 'delivered',
  READ: 'read',
  PLAYED: 'read',
  DELETED: null,
};
const STATUS_BY_NUMBER = ['ERROR', 'PENDING', 'SERVER_ACK', 'DELIVERY_ACK', 'READ', 'PLAYED'];

function statusOf(raw: unknown): DeliveryStatus | null {
  const name = typeof raw === 'number' ? STATUS_BY_NUMBER[raw] : str(raw);
  return name === undefined || name === null ? null : (STATUS[name] ?? null);
}

/**
 * `messages.update`: `{keyId, remoteJid, fromMe, status}` (2.x) or Baileys' `[{key, update}]`
 * (1.x). Our messages' statuses are recorded; an update carrying edited text is an edit.
 */
function update(data: unknown, instance: string, channel: string, at: number): Normalised {
  const out = collected();
  for (const item of Array.isArray(data) ? data : [data]) {
    if (!isObj(item)) {
      out.ignored.push('malformed');
      continue;
    }
    const key = isObj(item.key) ? item.key : item;
    const change = isObj(item.update) ? item.update : item;
    const newText =
      isObj(change.message) && isObj(change.message.editedMessage) && isObj(change.message.editedMessage.message) ? change.message.editedMessage.message : null;
    const id = str(key.id) ?? str(item.keyId);
    if (newText && id !== null && key.fromMe === false) {
      const content = textOf(newText);
      const sender = senderOf(key, item);
      if ('ignore' in content || sender === null || notAChat(str(key.remoteJid) ?? '')) out.ignored.push('not-text');
      else {
        const stamp = String(change.messageTimestamp ?? contentId(newText) ?? '');
        out.messages.push({
          provider: 'evolution',
          id: messageKey('evolution', instance, `edit\0${id}\0${stamp}`),
          channel,
          ...sender,
          text: content.text,
          displayName: null,
          editOf: messageKey('evolution', instance, id),
        });
      }
      continue;
    }
    out.ignored.push('status-update');
    const status = statusOf(change.status);
    if (key.fromMe === true && id !== null && status !== null) out.statuses.push({ channel, gatewayId: id, status, at });
  }
  return done(out);
}

/** `send.message`: Evolution took a message of ours (the data is the sent message, `status` PENDING or SERVER_ACK). */
function sent(data: unknown, channel: string, at: number): Normalised {
  const out = collected();
  out.ignored.push('status-update');
  const key = isObj(data) && isObj(data.key) ? data.key : null;
  const id = key ? str(key.id) : null;
  const status = isObj(data) ? (statusOf(data.status) ?? 'sent') : null;
  if (key?.fromMe === true && id !== null && status !== null) out.statuses.push({ channel, gatewayId: id, status, at });
  return done(out);
}

/**
 * `connection.update` `{state: open | connecting | close, statusReason}` (statusReason is
 * Baileys' disconnect code: 401 logged out, 403 banned, 428/408/515 dropped or restarting):
 * `open` brings the instance back, `close` takes it out of rotation, `connecting` says nothing
 * yet (Baileys passes through it on every reconnect).
 */
function connection(data: unknown, channel: string): Normalised {
  const out = collected();
  out.ignored.push('status-update');
  const state = isObj(data) ? str(data.state) : null;
  const code = isObj(data) && (typeof data.statusReason === 'number' || typeof data.statusReason === 'string') ? String(data.statusReason) : '';
  if (state === 'open') out.health.push({ channel, healthy: true, reason: 'open' });
  else if (state === 'close') out.health.push({ channel, healthy: false, reason: `close ${code}`.trim() });
  return done(out);
}

export function normaliseEvolution(body: Obj, pathEvent: string | undefined): Normalised {
  const named = str(body.event) ?? pathEvent ?? null;
  if (named === null || typeof body.instance !== 'string') {
    return { kind: 'invalid', reason: 'Evolution event needs event, instance and data' };
  }
  const instance = body.instance;
  const channel = `evolution:${instance}`;
  // Status updates are dated when we hear them: Evolution's `date_time` is its server's local
  // time stamped `Z` (hours off outside UTC), and its receipts carry no timestamp of their own.
  const at = Date.now();
  // The kind first: Evolution sends every event when its list is empty, and many carry an
  // array (contacts.upsert, chats.upsert, messages.set): not for us, but nothing wrong either.
  switch (evolutionEventName(named)) {
    case 'messages.upsert':
      return upsert(body.data, instance, channel);
    case 'messages.edited':
      return edited(body.data, instance, channel);
    case 'messages.update':
      return update(body.data, instance, channel, at);
    case 'send.message':
      return sent(body.data, channel, at);
    case 'connection.update':
      return connection(body.data, channel);
    default:
      return ignoredOne('event-kind');
  }
}
