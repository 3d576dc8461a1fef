/**
 * Where the login page's codes come from, behind one shape: at `/` the typed client registers
 * a code (the server draws its emoji string) and follows it over a socket; on the OpenID
 * interaction page the server registered the code and the page polls the interaction's status.
 */
import { PinAuthClient, type Profile } from '@pin-auth/client';
import type { PageFlow } from '../page.js';
import { fillText, type ScriptTexts } from '../texts.js';

/** A live code's progress before it ends. */
export type Progress = 'waiting' | 'awaiting-confirmation';

export type Outcome =
  /** `/`: who signed in, and the way out */
  | { kind: 'signed-in'; profile: Profile; signOut(): Promise<void> }
  /** the interaction is over: the browser goes back to the app */
  | { kind: 'redirect'; to: string }
  /** the code ended without a login; `backTo` (interaction): where the app hears of it */
  | { kind: 'ended'; status: 'expired' | 'denied' | 'failed'; backTo?: string }
  | { kind: 'error'; message: string };

export interface Attempt {
  emojiString: string;
  text: string;
  waLink: string;
  /** seconds the code lives from now */
  expiresIn: number;
  onProgress(listener: (p: Progress) => void): void;
  readonly outcome: Promise<Outcome>;
}

export interface Flow {
  /** A new code (the first one, or after the last one ended). */
  next(): Promise<Attempt>;
}

const anyChat = (text: string): string => `https://wa.me/?text=${encodeURIComponent(text)}`;

function clientFlow(whatsappNumber: string | undefined): Flow {
  const client = new PinAuthClient({ baseUrl: location.origin, whatsappNumber });
  return {
    async next() {
      // no emoji string of our own: the server draws it (always, in production)
      const login = await client.startLogin();
      const outcome = login.session.then(
        async (session): Promise<Outcome> => ({
          kind: 'signed-in',
          profile: await client.profile(session).catch(() => ({ ...session.user, surname: '' })),
          signOut: () => client.logout(session).catch(() => undefined),
        }),
        (): Outcome => {
          const s = login.status;
          return { kind: 'ended', status: s === 'expired' || s === 'denied' ? s : 'failed' };
        },
      );
      return {
        emojiString: login.emojiString,
        text: login.text,
        // without a configured number, wa.me lets the person pick the chat
        waLink: login.waLink ?? anyChat(login.text),
        expiresIn: login.expiresIn,
        onProgress: (listener) => {
          login.onStatus((s) => {
            if (s === 'waiting' || s === 'awaiting-confirmation') listener(s);
          });
        },
        outcome,
      };
    },
  };
}

interface StatusAnswer {
  state?: 'pending' | 'awaiting-confirmation' | 'done' | 'denied' | 'restart';
  redirectTo?: string;
  message?: string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function interactionFlow(flow: Extract<PageFlow, { kind: 'interaction' }>, texts: ScriptTexts): Flow {
  let first = true;
  return {
    async next() {
      if (!first) {
        // the server draws the next code when the page is asked for again
        location.reload();
        return new Promise<never>(() => undefined);
      }
      first = false;
      const listeners = new Set<(p: Progress) => void>();
      const poll = async (): Promise<Outcome> => {
        let wait = 1000;
        for (;;) {
          await sleep(wait);
          let res: Response;
          let body: StatusAnswer;
          try {
            res = await fetch(flow.statusUrl, { credentials: 'same-origin', headers: { accept: 'application/json' } });
            body = (await res.json()) as StatusAnswer;
          } catch {
            wait = Math.min(wait * 2, 10_000); // offline for a moment: try again, less often
            continue;
          }
          // the network's budget of sign-in polls is spent (many pages behind one address): wait as told
          if (res.status === 429) {
            wait = Math.min(Math.max(1, Number(res.headers.get('retry-after')) || 1) * 1000, 60_000);
            continue;
          }
          wait = 1000;
          // the provider's reasons are technical ("interaction session id cookie not found"): said after the way on
          if (!res.ok) return { kind: 'error', message: fillText(texts.cannotContinue, { reason: body.message ?? `HTTP ${res.status}` }) };
          if (body.state === 'done' && body.redirectTo) return { kind: 'redirect', to: body.redirectTo };
          if (body.state === 'denied') return { kind: 'ended', status: 'denied', backTo: body.redirectTo };
          if (body.state === 'restart') return { kind: 'ended', status: 'expired' };
          for (const l of listeners) l(body.state === 'awaiting-confirmation' ? 'awaiting-confirmation' : 'waiting');
        }
      };
      return {
        emojiString: flow.emojiString,
        text: flow.text,
        waLink: flow.waLink,
        expiresIn: flow.expiresIn,
        onProgress: (listener) => void listeners.add(listener),
        outcome: poll(),
      };
    },
  };
}

export const flowOf = (flow: PageFlow, texts: ScriptTexts): Flow => (flow.kind === 'client' ? clientFlow(flow.whatsappNumber) : interactionFlow(flow, texts));
