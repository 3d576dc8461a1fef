import { hkdfSync } from 'node:crypto';
import { randomByte } from '../random.js';

/**
 * The alphabet of the emoji strings the server draws. Chosen so a person reads and types them
 * without doubt: one code point each, shown as emoji by default (no U+FE0F to lose), from
 * Unicode 10 or older (every phone of the last years draws them), no faces, hands or people
 * (skin tones, look-alike expressions), no flags, and no two alike (one apple, one dog, ...).
 * 64 symbols: 6 bits each, so the default 8-emoji string (EMOJI_LENGTH) is one of
 * 2^48 ≈ 2.8 × 10^14 (the arithmetic against guessing is in docs/security.md).
 */
export const EMOJI_ALPHABET: readonly string[] = [
  ...'🐶🐱🐭🐰🦊🐻🐼🐨🐯🦁🐮🐷🐸🐵🐧🐤',
  ...'🦉🐝🦋🐌🐞🐢🐍🐙🦀🐟🐬🦈🐘🦄🍎🍌',
  ...'🍇🍉🍓🍒🍍🥝🍋🥕🌽🍄🍕🍩🧀🎂🚀🚗',
  ...'🚲⛵🚁⚽🎸🎈🎁🔑🔔💡⏰👑💎🌈🌵🌻',
];

/**
 * A random byte's low six bits pick a symbol: 256 is a multiple of 64, so each is equally
 * likely and no byte is thrown away (crypto.randomInt costs about 70 ns a call, and a
 * registration draws 32 symbols).
 */
const SYMBOL_MASK = EMOJI_ALPHABET.length - 1;
if ((EMOJI_ALPHABET.length & SYMBOL_MASK) !== 0 || EMOJI_ALPHABET.length > 256) {
  throw new Error('the emoji alphabet must have a power-of-two size up to 256 (uniform draws from bytes)');
}

/** `count` strings of `length` emoji each, one symbol per byte that `next` gives. */
function stringsFrom(next: () => number, count: number, length: number): string[] {
  const out: string[] = [];
  for (let c = 0; c < count; c++) {
    let text = '';
    for (let i = 0; i < length; i++) text += EMOJI_ALPHABET[next() & SYMBOL_MASK];
    out.push(text);
  }
  return out;
}

/** `count` uniformly drawn strings of `length` emoji each from the alphabet (crypto randomness). */
export const drawEmojiStrings = (count: number, length: number): string[] => stringsFrom(randomByte, count, length);

/**
 * The same draw made from a secret seed (HKDF-SHA256 of it): the same seed gives the same
 * strings, so a retried registration (the PIN and its Idempotency-Key, keyed by the server's
 * PIN-hash key: registrations/pin.ts) finds the string its first attempt drew without the string
 * being stored anywhere. Uniform as long as the seed is secret.
 */
export function deriveEmojiStrings(seed: Buffer, count: number, length: number): string[] {
  const bytes = Buffer.from(hkdfSync('sha256', seed, '', 'pin-auth/emoji-strings/v1', count * length));
  let at = 0;
  return stringsFrom(() => bytes[at++]!, count, length);
}

/** Bits of a drawn string of `length` emoji. */
export const drawnBits = (length: number): number => length * Math.log2(EMOJI_ALPHABET.length);
