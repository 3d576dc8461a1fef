import { createHmac, randomBytes } from 'node:crypto';

/**
 * What the load looks like: Evolution API `messages.upsert` bodies as a gateway posts them
 * (unique message ids, varied emoji strings and senders), signed the way the service checks
 * them (`X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the exact body>`), and unique PINs
 * and emoji strings for registrations (only one active registration may hold an emoji string).
 */

// One grapheme each, none with U+FE0F (normalisation strips it, which would make two entries
// collide), and no entry a prefix of another: every sequence of entries is a distinct string.
const EMOJI = [
  ...'🍎🚀🐱🐶🦊🐼🐨🐯🦁🐮🐷🐸🐵🐔🐧🐦🐤🦆🦅🦉🦇🐺🐗🐴🦄🐝🐛🦋🐌🐞🐜🐢🐍🦎🦖🦕🐙🦑🦐🦀🐡🐠🐟🐬🐳🐋🦈🐊🐅🐆🦓🦍🐘🦛🦏🐪🐫🦒🦘🍇🍉🍋🍌🍍🥭🍑🍒🍓🥝🍅🥥🥑🍆🥔🥕🌽🥦🍄🥜🌰🍞🥐🥖🥨🥯🥞🧇🧀🍖🍗🥩🥓🍔🍟🍕🌭🥪🌮🌯',
  '👍🏽',
  '👩‍💻',
  '🇧🇷',
  '🧑🏾‍🚀',
];

/** Base-|EMOJI| digits of n, at least `minLength` long: distinct n give distinct strings. */
export function emojiFor(n: number, minLength = 4): string {
  const out: string[] = [];
  let v = n;
  do {
    out.push(EMOJI[v % EMOJI.length]!);
    v = Math.floor(v / EMOJI.length);
  } while (v > 0 || out.length < minLength);
  return out.join('');
}

/** A run-unique source of sequence numbers, so emoji strings never repeat within a run. */
export class Sequence {
  private next = 0;
  take(): number {
    return this.next++;
  }
}

const RUN = randomBytes(4).toString('hex');

export const pinFor = (n: number): string => `bench-${RUN}-${n.toString(36)}`;

export const phoneFor = (n: number): string => `+55119${String(10_000_000 + (n % 89_999_999)).padStart(8, '0')}`;

const NAMES = ['Ana Souza', 'João Silva', 'Zoë Müller', 'Chidi Okafor', 'Mei Lin', 'Ravi', 'Ólafur Þór'];

/** The body Evolution API v2 posts for an incoming text message: `PIN: <emoji>` from phoneFor(n). */
export function evolutionBody(n: number, emoji: string, phone = phoneFor(n)): string {
  return evolutionText(n, `PIN: ${emoji}`, '3EB0', phone);
}

/** Login n's answer to the confirmation question (its own message id), from the same phone. */
export function answerBody(n: number, text = 'YES'): string {
  return evolutionText(n, text, '3EB1', phoneFor(n));
}

/** `idPrefix` keeps the message ids of codes and answers apart (the worker de-duplicates by id). */
function evolutionText(n: number, text: string, idPrefix: string, phone: string): string {
  const digits = phone.replace(/^\+/, '');
  const id = idPrefix + n.toString(16).toUpperCase().padStart(8, '0') + RUN.toUpperCase();
  return JSON.stringify({
    event: 'messages.upsert',
    instance: 'bench-instance',
    data: {
      key: { remoteJid: `${digits}@s.whatsapp.net`, fromMe: false, id },
      pushName: NAMES[n % NAMES.length],
      status: 'DELIVERY_ACK',
      message: { conversation: text, messageContextInfo: { deviceListMetadataVersion: 2 } },
      messageType: 'conversation',
      messageTimestamp: Math.floor(Date.now() / 1000),
      instanceId: '6e1f3c1a-5b7e-4a4f-9f2d-6b7c1f0e2a11',
      source: 'android',
    },
    destination: 'http://127.0.0.1/messaging-endpoint',
    date_time: new Date().toISOString(),
    sender: '5511999990000@s.whatsapp.net',
    server_url: 'http://127.0.0.1:8080',
    apikey: 'B6D711FCDE4D4FD5936544120E713976',
  });
}

export interface SignedRequest {
  body: string;
  headers: Record<string, string>;
}

export function signWebhook(body: string, secret: string): SignedRequest {
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
  };
}
