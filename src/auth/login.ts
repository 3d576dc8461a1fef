import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';
import type { InboundJob } from '../queues/jobs.js';
import { chatIntent } from '../chat/intent.js';
import { LoginChain } from './login-chain.js';
import { emojiHash } from '../registrations/emoji.js';
import { newShortId, newUserId } from './ids.js';
import { parseLoginResult, type LoginResult } from './login-result.js';
import { decodeOrigin, type Origin } from './origin.js';
import { parseRoles } from './roles.js';
import { MAX_SESSIONS_PER_USER, type Sessions } from './sessions.js';
import type { TokenService } from './tokens.js';

/**
 * A chat message becomes a login: match its emoji string to a pending registration, find or
 * create the user by phone, open a session, issue tokens, store the result for check-login.
 * Two Redis round trips (claim, complete) around token signing; both are atomic scripts. On a
 * Redis Cluster the claim is a chain of one-slot steps (login-chain.ts), one call each.
 * With confirmation on, a matched code first asks the person (YES / NO from the same phone
 * decides); STOP closes every session of the phone's user.
 */
export type LoginOutcome =
  | { outcome: 'logged-in'; pinId: string; pinHash: string; result: LoginResult; phone: string }
  | { outcome: 'confirmation-asked'; pinId: string; pinHash: string; phone: string; origin: Origin; expiresAt: number }
  | { outcome: 'denied'; pinId: string; pinHash: string; phone: string; origin: Origin }
  | { outcome: 'unanswered'; phone: string }
  | { outcome: 'signed-out'; phone: string; sessions: number }
  /** a retry of a job whose login was collected or cancelled; `signedIn` while its session is open */
  | { outcome: 'already-done'; pinId: string; signedIn: boolean }
  | { outcome: 'duplicate' }
  | { outcome: 'no-phone' }
  | { outcome: 'not-a-code' }
  | { outcome: 'no-match'; phone: string };

export interface LoginSettings {
  graceSeconds: number;
  /** ask in the chat before a matched code logs in (LOGIN_CONFIRMATION) */
  confirm: boolean;
  /** the claim one call per step (Redis Cluster: each step's keys in one slot) */
  stepwise?: boolean;
}

const DEDUP_TTL_SECONDS = 24 * 3600;

/** `pushName` splits at the first space into name and surname. */
export function splitName(displayName: string | null): { name: string; surname: string } {
  const trimmed = (displayName ?? '').trim().slice(0, 200);
  const space = trimmed.indexOf(' ');
  if (space === -1) return { name: trimmed, surname: '' };
  return { name: trimmed.slice(0, space), surname: trimmed.slice(space + 1).trim() };
}

export class LoginProcessor {
  private readonly chain: LoginChain;

  constructor(
    private readonly scripts: Scripts,
    private readonly keys: Keys,
    private readonly tokens: TokenService,
    private readonly sessions: Sessions,
    private readonly settings: LoginSettings,
    /** the claim's runner (tests pass one that stops between steps) */
    chain?: LoginChain,
  ) {
    this.chain = chain ?? new LoginChain(scripts, keys, settings.stepwise ?? false);
  }

  async process(job: InboundJob): Promise<LoginOutcome> {
    const { message, nonce } = job;
    if (message.phone === null) return { outcome: 'no-phone' };
    const intent = chatIntent(message.text);
    if (intent.kind === 'stop') {
      return { outcome: 'signed-out', phone: message.phone, sessions: await this.sessions.endAllOfPhone(message.phone) };
    }
    // YES / NO mean nothing while nobody is ever asked
    if (intent.kind === 'other' || (intent.kind !== 'code' && !this.settings.confirm)) return { outcome: 'not-a-code' };
    const { name, surname } = splitName(message.displayName);
    const graceMs = this.settings.graceSeconds * 1000;

    const claim = await this.chain.claim({
      msgId: message.id,
      nonce,
      e: intent.kind === 'code' ? emojiHash(intent.emoji) : '',
      phone: message.phone,
      newUid: newUserId(),
      name,
      surname,
      newSid: newShortId(),
      newRj: newShortId(),
      sessTtl: this.tokens.refreshTtl * 1000,
      grace: graceMs,
      dedupTtl: DEDUP_TTL_SECONDS,
      maxSessions: MAX_SESSIONS_PER_USER,
      mode: intent.kind,
      confirm: this.settings.confirm,
    });
    if (claim[0] === 'duplicate') return { outcome: 'duplicate' };
    if (claim[0] === 'ask') {
      const [, pinId = '', pinHash = '', expiresAt = '0', origin = ''] = claim;
      return { outcome: 'confirmation-asked', pinId, pinHash, phone: message.phone, origin: decodeOrigin(origin), expiresAt: Number(expiresAt) };
    }
    if (claim[0] === 'denied') {
      const [, pinId = '', pinHash = '', origin = ''] = claim;
      return { outcome: 'denied', pinId, pinHash, phone: message.phone, origin: decodeOrigin(origin) };
    }
    if (claim[0] === 'unanswered') return { outcome: 'unanswered', phone: message.phone };
    if (claim[0] === 'done') return { outcome: 'already-done', pinId: '', signedIn: claim[1] === '1' };
    if (claim[0] === 'completed') {
      // a retry of this job after its login was stored: announce it again (at least once)
      const [, pinId = '', pinHash = '', resultJson = ''] = claim;
      const result = parseLoginResult(resultJson);
      return { outcome: 'logged-in', pinId, pinHash, result, phone: result.user.phone };
    }
    if (claim[0] !== 'claimed') return { outcome: 'no-match', phone: message.phone };
    const [, pinId = '', pinHash = '', sid = '', refreshJti = '', userId = '', userName = '', , phone = '', rolesJson = '[]'] = claim;

    const roles = parseRoles(rolesJson, ['user']);
    const pair = this.tokens.issuePair(userId, sid, roles, refreshJti);
    const result: LoginResult = {
      token: pair.token,
      refreshToken: pair.refreshToken,
      user: { id: userId, name: userName, phone, roles },
    };
    const done = await this.scripts.number('complete-login', [
      this.keys.registration(pinHash),
      message.id,
      JSON.stringify(result),
      graceMs,
    ]);
    if (done !== 1) return { outcome: 'already-done', pinId, signedIn: false };
    return { outcome: 'logged-in', pinId, pinHash, result, phone };
  }
}
