import { emojiFromChat } from '../messaging/pin-text.js';
import { ANSWERS } from './catalogue.js';

/**
 * What a person's chat message asks for: a sign-in code, an answer to the confirmation
 * question (YES / NO, 1 / 2, in any catalogue language), or STOP (sign out everywhere).
 */
export type ChatIntent = { kind: 'code'; emoji: string } | { kind: 'yes' } | { kind: 'no' } | { kind: 'stop' } | { kind: 'other' };

const MAX_ANSWER = 32;
const EDGES = /^[\s\p{P}\p{S}]+|[\s\p{P}\p{S}]+$/gu;
const MARKS = /\p{M}/gu;

/** "Yes!", " SÍ. " and "sí" all become "si"; "Não" becomes "nao". */
export function answerWord(text: string): string {
  return text.slice(0, MAX_ANSWER * 4).replace(EDGES, '').normalize('NFD').replace(MARKS, '').toLowerCase();
}

const lookup = new Map<string, ChatIntent['kind']>();
for (const [kind, words] of Object.entries(ANSWERS) as Array<[ChatIntent['kind'], readonly string[]]>) {
  for (const w of words) lookup.set(answerWord(w), kind);
}

export function chatIntent(text: string | null): ChatIntent {
  if (text === null) return { kind: 'other' };
  const emoji = emojiFromChat(text);
  if (emoji !== null) return { kind: 'code', emoji };
  if (text.length > MAX_ANSWER * 4) return { kind: 'other' };
  const kind = lookup.get(answerWord(text));
  return kind === 'yes' || kind === 'no' || kind === 'stop' ? { kind } : { kind: 'other' };
}
