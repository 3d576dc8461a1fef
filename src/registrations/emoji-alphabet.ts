import { randomInt } from 'node:crypto';

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

/** A uniformly drawn string of `length` emoji from the alphabet (crypto randomness). */
export function drawEmojiString(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += EMOJI_ALPHABET[randomInt(EMOJI_ALPHABET.length)];
  return out;
}

/** Bits of a drawn string of `length` emoji. */
export const drawnBits = (length: number): number => length * Math.log2(EMOJI_ALPHABET.length);
