import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { evolutionMessage } from './gateway.js';
import { eventually, post, request } from './http.js';

/** Random secrets and emoji strings, so tests within one prefix never collide by accident. */
const POOL = [
  ...'🍎🚀🐱🐶🦊🐼🐨🐯🦁🐮🐷🐸🐵🐔🐧🐦🐤🦆🦅🦉🦇🐺🐗🐴🦄🐝🐛🦋🐌🐞🐜🦗🐢🐍🦎🦖🦕🐙🦑🦐🦀🐡🐠🐟🐬🐳🐋🦈🐊🐅🐆🦓🦍🐘🦛🦏🐪🐫🦒🦘🐃🐂🐄🐎🐖🐏🐑🦙🐐🦌🐕🐩🐈🐓🦃🦚🦜🦢🕊🐇🦝🦨🦡🦦🦥🐁🐀🐿🦔',
];

export function randomPin(): string {
  return `pin-${randomBytes(12).toString('base64url')}`;
}

export function randomEmoji(length = 6): string {
  const bytes = randomBytes(length);
  return Array.from(bytes, (b) => POOL[b % POOL.length]).join('');
}

/**
 * A random UK mobile number in +44 740x, a block wholly of Great Britain: under +44 77 some
 * numbers are Jersey's or Guernsey's (and some invalid), which a country rule would refuse.
 */
export function randomPhone(): string {
  return `+44740${String(Math.floor(1e6 + Math.random() * 9e6))}`;
}

export interface LoginBody {
  success: boolean;
  verified: boolean;
  token: string;
  refreshToken: string;
  user: { id: string; name: string; phone: string; roles: string[] };
}

/** Sends the chat message through the webhook as Evolution API would. */
export async function sendChat(base: string, text: string, opts: Parameters<typeof evolutionMessage>[0] | object = {}, headers: Record<string, string> = {}) {
  const body = evolutionMessage({ ...(opts as object), text } as Parameters<typeof evolutionMessage>[0]);
  return request(base, 'POST', '/messaging-endpoint', { json: body, headers });
}

/** Register → chat message → poll until verified: the whole PIN login, as a client app does it. */
export async function fullLogin(base: string, opts: { phone?: string; pushName?: string; webhookBase?: string } = {}) {
  const pin = randomPin();
  const emoji = randomEmoji();
  const reg = await post(base, '/register-pin', { pin, emojiString: emoji });
  expect(reg.status, reg.text).to.equal(200);
  const hook = await sendChat(opts.webhookBase ?? base, `PIN: ${emoji}`, { phone: opts.phone ?? randomPhone(), pushName: opts.pushName });
  expect(hook.status, hook.text).to.equal(200);
  const login = await eventually(async () => {
    const r = await post<LoginBody>(base, '/check-login', { pin });
    if (r.status !== 200) throw new Error(`check-login ${r.status}: ${r.text}`);
    return r.body.verified ? r.body : undefined;
  });
  return { pin, emoji, pinId: String(reg.body.pinId), login };
}
