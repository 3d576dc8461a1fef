import { isEmojiString } from '../registrations/emoji.js';

/**
 * The chat message a person sends: `PIN: <emoji string>` (any case, spaces around the colon
 * tolerated) or the bare emoji string. Returns the emoji string, or null when it is neither.
 */
const PREFIXED = /^\s*pin\s*:\s*([\s\S]*)$/iu;

export function emojiFromChat(text: string): string | null {
  if (text.length > 1024) return null;
  const m = PREFIXED.exec(text);
  const candidate = m ? m[1]! : text;
  return isEmojiString(candidate) ? candidate : null;
}
