import type { ChatConfig } from '../config.js';
import { emojiClusters } from '../registrations/emoji.js';
import { fill } from '../chat-catalogue.js';
import { chatIntent } from './intent.js';

/**
 * A user's `/send-message` goes out from the service's own number, so it must never pass for
 * the service's own voice (a "security check: reply PIN: … then YES" would collect the
 * reader's login for the sender). Every such message is headed by who sent it (their phone
 * as the service knows it) and that it is not from the service; and a text that carries what
 * the service's own conversation is made of is refused.
 */

/** Emoji-only lines this long look like a sign-in code (1-3 emoji are an ordinary reaction). */
const CODE_LIKE_EMOJI = 4;
const PIN_MARK = /\bpin\s*:/iu;

/** Why `text` may not be relayed (a sign-in code or a chat answer in it), or null when it may. */
export function chatCommandIn(text: string): string | null {
  if (PIN_MARK.test(text)) return 'carries a sign-in code ("PIN: …")';
  for (const raw of text.split(/\r?\n/u)) {
    const line = raw.trim();
    if (line === '') continue;
    const intent = chatIntent(line).kind;
    // DELETE too: "reply DELETE, then DELETE 42" would have the reader erase their own account
    if (intent === 'yes' || intent === 'no' || intent === 'stop' || intent === 'delete') return `has a line that is a chat answer ("${line}")`;
    if ((emojiClusters(line.replace(/\s+/gu, ''))?.length ?? 0) >= CODE_LIKE_EMOJI) return 'has a line that looks like a sign-in code (emoji only)';
  }
  return null;
}

/** Who a relayed message is from, as the reader sees it: name and phone, whichever the account has. */
export function senderLabel(name: string | null, phone: string | null): string {
  const n = (name ?? '').trim();
  if (n && phone) return `${n} (${phone})`;
  return phone ?? (n || '?');
}

/** The text as it goes out: the service's heading, then the user's words. */
export function relayedText(cfg: ChatConfig, sender: string, text: string): string {
  return `${fill(cfg.texts.relayed, { app: cfg.appName, sender })}\n\n${text}`;
}
