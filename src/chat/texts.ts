import type { Origin } from '../registrations/origin.js';
import type { ChatConfig } from '../config.js';
import { fill, type ReplyKind } from '../chat-catalogue.js';
import type { ChatButton } from './message.js';

/** The reply texts, filled in: what each kind of chat reply says (the kinds: chat-catalogue.ts). */
export type { ReplyKind };

export type ReplyFacts =
  | { kind: 'confirm'; origin: Origin; requestedAt: Date; question: string }
  | { kind: 'which-one'; open: Array<{ question: string; origin: Origin; requestedAt: Date }> }
  | { kind: 'signed-out'; sessions: number }
  | { kind: Exclude<ReplyKind, 'confirm' | 'which-one' | 'signed-out'> };

const LOCALES: Record<ChatConfig['language'], string> = { en: 'en-GB', pt: 'pt-BR', es: 'es-ES' };

const formats = new Map<string, Intl.DateTimeFormat>();
function timeFormat(cfg: ChatConfig): Intl.DateTimeFormat {
  const key = `${cfg.language}|${cfg.timeZone}`;
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(LOCALES[cfg.language], {
      day: 'numeric',
      month: 'short',
      hour: '2-digit',
      minute: '2-digit',
      timeZone: cfg.timeZone,
      timeZoneName: 'short',
    });
    formats.set(key, f);
  }
  return f;
}

export function replyText(cfg: ChatConfig, facts: ReplyFacts): string {
  const t = cfg.texts;
  const app = cfg.appName;
  switch (facts.kind) {
    case 'signed-in':
      // every login says how to undo it
      return `${fill(t.signedIn, { app })} ${fill(t.undoHint, { app })}`;
    case 'confirm':
      return fill(t.confirm, {
        app,
        device: facts.origin.device,
        place: facts.origin.ip,
        time: timeFormat(cfg).format(facts.requestedAt),
        number: facts.question,
      });
    case 'which-one': {
      const list = facts.open.map((q) => `${q.question}: ${q.origin.device}, ${q.origin.ip}, ${timeFormat(cfg).format(q.requestedAt)}`).join('; ');
      return fill(t.whichOne, { app, count: facts.open.length, list, example: facts.open[0]?.question ?? '' });
    }
    case 'signed-out':
      return fill(t.signedOut, { app, count: facts.sessions });
    case 'unknown-code':
      return fill(t.unknownCode, { app });
    case 'denied':
      return fill(t.denied, { app });
    case 'nothing-to-confirm':
      return fill(t.nothingToConfirm, { app });
    case 'cannot-sign-in':
      return fill(t.cannotSignIn, { app });
    case 'slow-down':
      return fill(t.slowDown, { app });
    case 'country-not-served':
      return fill(t.countryNotServed, { app });
    case 'blocked':
      return fill(t.blocked, { app });
  }
}

/**
 * The question's YES / NO buttons, bound to its number: `yes:<n>` / `no:<n>`, which the Cloud
 * API reader turns back into "YES <n>" / "NO <n>" (messaging/inbound-cloud.ts), so a press
 * answers exactly the question it came with.
 */
export function confirmButtons(cfg: ChatConfig, question: string): ChatButton[] {
  return [
    { id: `yes:${question}`, title: cfg.texts.yesButton },
    { id: `no:${question}`, title: cfg.texts.noButton },
  ];
}
