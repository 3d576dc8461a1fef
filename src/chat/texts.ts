import type { Origin } from '../registrations/origin.js';
import type { ChatConfig } from '../config.js';
import { fill, type ReplyKind } from '../chat-catalogue.js';
import type { ChatButton } from './message.js';

/** The reply texts, filled in: what each kind of chat reply says (the kinds: chat-catalogue.ts). */
export type { ReplyKind };

/** One place the person is signed in, as SESSIONS lists it: an app session or an OpenID login (`client`: the app's name). */
export interface ChatDevice {
  device: string;
  /** the signing-in request's address, host part masked */
  ip: string;
  lastUsedAt: Date;
  client?: string;
}

export type ReplyFacts =
  | { kind: 'confirm'; origin: Origin; requestedAt: Date; question: string }
  | { kind: 'which-one'; open: Array<{ question: string; origin: Origin; requestedAt: Date }> }
  | { kind: 'signed-out'; sessions: number }
  | { kind: 'sessions'; devices: readonly ChatDevice[] }
  | { kind: 'erase-confirm'; number: string; minutes: number }
  /** `blocked`: the account is blocked, so only an operator erases it */
  | { kind: 'nothing-to-erase'; blocked?: boolean }
  | { kind: Exclude<ReplyKind, 'confirm' | 'which-one' | 'signed-out' | 'sessions' | 'erase-confirm' | 'nothing-to-erase'> };

/** Places SESSIONS names, most recently used first; the count says how many there are in all. */
export const LISTED_DEVICES = 10;

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
    case 'help':
      return fill(t.help, { app });
    case 'sessions': {
      if (facts.devices.length === 0) return fill(t.noSessions, { app });
      const recent = [...facts.devices].sort((a, b) => b.lastUsedAt.getTime() - a.lastUsedAt.getTime());
      const items = recent.slice(0, LISTED_DEVICES).map((d) => {
        const vars = { device: d.device, place: d.ip, time: timeFormat(cfg).format(d.lastUsedAt), client: d.client ?? '' };
        return fill(d.client === undefined ? t.sessionItem : t.oidcItem, vars);
      });
      const more = recent.length > LISTED_DEVICES ? ` (+${recent.length - LISTED_DEVICES})` : '';
      return fill(t.sessions, { app, count: recent.length, list: items.join('; ') + more });
    }
    case 'erase-confirm':
      return fill(t.eraseConfirm, { app, number: facts.number, minutes: facts.minutes });
    case 'erased':
      return fill(t.erased, { app });
    case 'nothing-to-erase':
      return fill(facts.blocked ? t.eraseBlocked : t.nothingToErase, { app });
    case 'no-account':
      return fill(t.noAccount, { app });
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
