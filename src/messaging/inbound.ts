import { createHash } from 'node:crypto';
import type { InboundMessage } from '../queues/jobs.js';

/**
 * Turns a gateway's webhook body into internal messages. Two shapes: Evolution API
 * (`messages.upsert`) and the WhatsApp Cloud API (`object: whatsapp_business_account`).
 * Anything that is not a text message from a person is `ignored` with a reason (answered 200:
 * the gateway must not retry it); a body of neither shape is `invalid` (400: it never succeeds).
 */
export type IgnoreReason =
  | 'event-kind'
  | 'from-me'
  | 'group'
  | 'broadcast'
  | 'not-text'
  | 'status-update'
  | 'no-phone';

export type Normalised =
  | { kind: 'messages'; messages: InboundMessage[]; ignored: IgnoreReason[] }
  | { kind: 'invalid'; reason: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

const PHONE_DIGITS = /^\d{7,15}$/;

/** `+digits` from a WhatsApp user JID (`<digits>[:device]@s.whatsapp.net`) or bare digits. */
export function phoneFromJid(jid: string | null): string | null {
  if (jid === null) return null;
  const at = jid.indexOf('@');
  const domain = at === -1 ? '' : jid.slice(at + 1);
  if (at !== -1 && domain !== 's.whatsapp.net' && domain !== 'c.us') return null;
  const digits = (at === -1 ? jid : jid.slice(0, at)).split(':')[0]!.replace(/^\+/, '');
  return PHONE_DIGITS.test(digits) ? '+' + digits : null;
}

/** A short stable digest, so message ids of any length or alphabet make safe Redis keys. */
export function messageKey(provider: string, scope: string, id: string): string {
  return createHash('sha256').update(`${provider}\0${scope}\0${id}`).digest('base64url').slice(0, 22);
}

/** A message without an id is known by a digest of its data; null when the data can't be serialised (nested too deeply). */
function contentId(data: Obj): string | null {
  try {
    return createHash('sha256').update(JSON.stringify(data)).digest('hex');
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
  const kind = event.toLowerCase().replace(/_/g, '.');
  if (kind !== 'messages.upsert') return { kind: 'messages', messages: [], ignored: ['event-kind'] };
  const key = data.key;
  if (!isObj(key) || typeof key.remoteJid !== 'string' || typeof key.fromMe !== 'boolean') {
    return { kind: 'invalid', reason: 'data.key.remoteJid (string) and data.key.fromMe (boolean) are required' };
  }
  const one = (reason: IgnoreReason): Normalised => ({ kind: 'messages', messages: [], ignored: [reason] });
  if (key.fromMe) return one('from-me');
  const jid = key.remoteJid;
  if (jid.endsWith('@g.us')) return one('group');
  if (jid.endsWith('@broadcast') || jid.endsWith('@newsletter')) return one('broadcast');

  const message = isObj(data.message) ? data.message : {};
  const extended = isObj(message.extendedTextMessage) ? message.extendedTextMessage : {};
  const text = str(message.conversation) ?? str(extended.text);
  if (text === null) return one('not-text');

  // Privacy ids (`<n>@lid`) carry no phone: Evolution gives it beside them.
  const phone = jid.endsWith('@lid')
    ? phoneFromJid(str(key.remoteJidAlt) ?? str(key.senderPn) ?? str(data.senderPn))
    : phoneFromJid(jid);

  const rawId = str(key.id) ?? contentId(data);
  if (rawId === null) return { kind: 'invalid', reason: 'data is nested too deeply' };
  return {
    kind: 'messages',
    messages: [
      {
        provider: 'evolution',
        id: messageKey('evolution', body.instance, rawId),
        phone,
        text,
        displayName: str(data.pushName),
      },
    ],
    ignored: [],
  };
}

function normaliseCloud(body: Obj): Normalised {
  if (!Array.isArray(body.entry)) return { kind: 'invalid', reason: 'Cloud API payload needs entry[]' };
  const messages: InboundMessage[] = [];
  const ignored: IgnoreReason[] = [];
  for (const entry of body.entry) {
    if (!isObj(entry) || !Array.isArray(entry.changes)) return { kind: 'invalid', reason: 'entry[].changes[] is required' };
    for (const change of entry.changes) {
      if (!isObj(change) || !isObj(change.value)) return { kind: 'invalid', reason: 'changes[].value is required' };
      const value = change.value;
      if (Array.isArray(value.statuses) && value.statuses.length > 0) ignored.push('status-update');
      if (!Array.isArray(value.messages)) continue;
      const contacts = Array.isArray(value.contacts) ? value.contacts.filter(isObj) : [];
      for (const m of value.messages) {
        if (!isObj(m) || typeof m.id !== 'string' || typeof m.from !== 'string') {
          return { kind: 'invalid', reason: 'messages[] need id and from' };
        }
        const text = m.type === 'text' && isObj(m.text) ? str(m.text.body) : null;
        if (text === null) {
          ignored.push('not-text');
          continue;
        }
        const contact = contacts.find((c) => c.wa_id === m.from) ?? contacts[0];
        const profile = contact && isObj(contact.profile) ? contact.profile : {};
        messages.push({
          provider: 'cloud',
          id: messageKey('cloud', '', m.id),
          phone: phoneFromJid(m.from),
          text,
          displayName: str(profile.name),
        });
      }
    }
  }
  return { kind: 'messages', messages, ignored };
}

export function normaliseWebhook(body: unknown): Normalised {
  if (!isObj(body)) return { kind: 'invalid', reason: 'The body must be a JSON object' };
  if (body.object === 'whatsapp_business_account') return normaliseCloud(body);
  if ('event' in body || 'data' in body || 'instance' in body) return normaliseEvolution(body);
  return { kind: 'invalid', reason: 'Neither an Evolution API event nor a WhatsApp Cloud API notification' };
}
