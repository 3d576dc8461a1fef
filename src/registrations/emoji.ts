import { hash } from 'node:crypto';
import { remembered } from '../remembered.js';

/**
 * Emoji strings: what the user types into the chat. Both sides of a match are normalised
 * (NFC, variation selector U+FE0F removed, whitespace removed), so `❤️` and `❤` match.
 */
export const MAX_EMOJI = 16;

const RGI_EMOJI = /^\p{RGI_Emoji}$/v;
const PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;
const VS16 = /\uFE0F/g;
const WHITESPACE = /\s+/gu;
/** Made on first use: building one maps ≈ 1 MB of ICU data, and most strings never need it. */
let segmenter: Intl.Segmenter | undefined;

export function normaliseEmoji(text: string): string {
  return text.normalize('NFC').replace(VS16, '').replace(WHITESPACE, '');
}

/**
 * The RGI_Emoji test is the costliest step of matching a chat message, and the same few
 * thousand emoji recur, so answers are remembered.
 */
const isEmojiGrapheme = remembered(testEmojiGrapheme, 10_000);

/** One grapheme cluster is an emoji, with or without its variation selectors. */
function testEmojiGrapheme(g: string): boolean {
  if (RGI_EMOJI.test(g)) return true;
  const bare = g.replace(VS16, '');
  if (RGI_EMOJI.test(bare)) return true;
  const cps = [...bare];
  // text-style forms such as ❤ or 1⃣ are RGI emoji once FE0F follows the first code point
  if (cps.length >= 1 && RGI_EMOJI.test(`${cps[0]}\uFE0F${cps.slice(1).join('')}`)) return true;
  return cps.length === 1 && PICTOGRAPHIC.test(bare);
}

/**
 * Code points that glue onto the one before them (skin-tone modifiers, GCB=Extend since
 * Unicode 11) or pair up (regional indicators of a flag): a string holding one is never split
 * per code point.
 */
const JOINS_NEIGHBOUR = (cp: number): boolean => (cp >= 0x1f3fb && cp <= 0x1f3ff) || (cp >= 0x1f1e6 && cp <= 0x1f1ff);

/**
 * The common chat code is single-code-point emoji only (🍎🚀🐱): each is then its own grapheme
 * cluster, because no emoji code point is Extend, ZWJ, SpacingMark or Prepend once modifiers and
 * regional indicators are set aside. Splitting by code point answers what Intl.Segmenter would at
 * a fraction of its cost (docs/benchmark.md, "Optimisations kept"); anything else
 * (sequences, flags, VS16, text) returns undefined and takes the segmenter's path.
 */
function singleCodePointClusters(compact: string): string[] | undefined {
  const out: string[] = [];
  for (const ch of compact) {
    if (JOINS_NEIGHBOUR(ch.codePointAt(0)!)) return undefined;
    if (!isEmojiGrapheme(ch)) return undefined;
    out.push(ch);
  }
  return out;
}

/** Returns the emoji clusters of `text` (whitespace ignored), or null when anything else is in it. */
export function emojiClusters(text: string): string[] | null {
  const compact = text.normalize('NFC').replace(WHITESPACE, '');
  if (compact === '') return null;
  const fast = singleCodePointClusters(compact);
  if (fast !== undefined) return fast;
  const out: string[] = [];
  segmenter ??= new Intl.Segmenter('en', { granularity: 'grapheme' });
  for (const { segment } of segmenter.segment(compact)) {
    if (!isEmojiGrapheme(segment)) return null;
    out.push(segment);
  }
  return out;
}

/** True when `text` is 1 to MAX_EMOJI emoji and nothing else. */
export function isEmojiString(text: string): boolean {
  const clusters = emojiClusters(text);
  return clusters !== null && clusters.length >= 1 && clusters.length <= MAX_EMOJI;
}

/** The Redis-side identity of an emoji string: a short digest of its normal form. */
export function emojiHash(text: string): string {
  return normalEmojiHash(normaliseEmoji(text));
}

/**
 * emojiHash of a string already in normal form (the server's drawn strings: single code points
 * of the alphabet, nothing to normalise).
 */
export function normalEmojiHash(normal: string): string {
  return hash('sha256', normal, 'base64url').slice(0, 22);
}
