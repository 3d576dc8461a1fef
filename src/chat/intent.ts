import { emojiFromChat } from './pin-text.js';
import { ANSWERS } from '../chat-catalogue.js';

/**
 * What a person's chat message asks for: a sign-in code, an answer to the confirmation
 * question (YES / NO, 1 / 2, in any catalogue language), STOP (sign out everywhere), or one of
 * the person's own commands: HELP, SESSIONS, DELETE (and "DELETE 42", its confirmation).
 */
export type ChatIntent =
  | { kind: 'code'; emoji: string }
  /** `question`: the number of the question answered ("YES 47"), absent for a bare answer */
  | { kind: 'yes'; question?: string }
  | { kind: 'no'; question?: string }
  | { kind: 'stop' }
  | { kind: 'help' }
  | { kind: 'sessions' }
  /** `confirm`: the number of the deletion confirmed ("DELETE 42"), absent for a bare DELETE (which asks) */
  | { kind: 'delete'; confirm?: string }
  | { kind: 'other' };

/** The intents that are the person's own commands (accounts/chat-rights.ts), not a login's. */
export type CommandIntent = Extract<ChatIntent, { kind: 'help' | 'sessions' | 'delete' }>;

export function isCommand(intent: ChatIntent): intent is CommandIntent {
  return intent.kind === 'help' || intent.kind === 'sessions' || intent.kind === 'delete';
}

const MAX_ANSWER = 32;
const EDGES = /^[\s\p{P}\p{S}]+|[\s\p{P}\p{S}]+$/gu;
const MARKS = /\p{M}/gu;

/** "Yes!", " SÍ. " and "sí" all become "si"; "Não" becomes "nao". */
export function answerWord(text: string): string {
  return text
    .slice(0, MAX_ANSWER * 4)
    .replace(EDGES, '')
    .normalize('NFD')
    .replace(MARKS, '')
    .toLowerCase();
}

const lookup = new Map<string, ChatIntent['kind']>();
for (const [kind, words] of Object.entries(ANSWERS) as Array<[ChatIntent['kind'], readonly string[]]>) {
  for (const w of words) lookup.set(answerWord(w), kind);
}

/** "yes 47", "sim #47", "1 47", "delete 42": an answer word, then a question's two-digit number. */
const NUMBERED = /^(\p{L}+|[12])(?:\s*[#:.,-]\s*|\s+|(?<=\p{L}))(\d{2})$/u;

export function chatIntent(text: string | null): ChatIntent {
  if (text === null) return { kind: 'other' };
  const emoji = emojiFromChat(text);
  if (emoji !== null) return { kind: 'code', emoji };
  if (text.length > MAX_ANSWER * 4) return { kind: 'other' };
  const word = answerWord(text);
  const kind = lookup.get(word);
  if (kind === 'yes' || kind === 'no' || kind === 'stop' || kind === 'help' || kind === 'sessions' || kind === 'delete') return { kind };
  const numbered = NUMBERED.exec(word);
  const answer = numbered ? lookup.get(numbered[1]!) : undefined;
  if (answer === 'delete') return { kind: 'delete', confirm: numbered![2]! };
  return answer === 'yes' || answer === 'no' ? { kind: answer, question: numbered![2]! } : { kind: 'other' };
}
