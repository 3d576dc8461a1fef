import { randomInt } from 'node:crypto';
import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';
import type { InboundJob } from '../chat/message.js';
import { chatIntent, isCommand, type ChatIntent } from '../chat/intent.js';
import { identitiesOf, identityState } from '../identity/identities.js';
import { LoginChain } from './login-chain.js';
import { emojiHash } from '../registrations/emoji.js';
import { newShortId, newUserId } from '../ids.js';
import { parseLoginResult, type LoginResult } from '../registrations/login-result.js';
import { decodeOrigin, type Origin } from '../registrations/origin.js';
import { parseRoles } from './roles.js';
import { MAX_SESSIONS_PER_USER, type Sessions } from './sessions.js';
import type { TokenService } from './tokens.js';

/**
 * A chat message becomes a login: match its emoji string to a pending registration, find or
 * create the sender's account by the identifiers the message carries (src/identity), open a
 * session, issue tokens, store the result for check-login.
 * Two Redis round trips (claim, complete) around token signing; both are atomic scripts. On a
 * Redis Cluster the claim is a chain of one-slot steps (login-chain.ts), one call each.
 * With confirmation on, a matched code first asks the person (YES / NO from the same sender
 * decides), as it always does for an account holding the `admin` role; a blocked account signs
 * no one in; STOP closes every session of the sender's account. A `user_changed_number` moves
 * the account to the new number.
 */
/** An open chat question: its number, who asked (the registering device) and when it lapses. */
export interface OpenQuestion {
  question: string;
  origin: Origin;
  expiresAt: number;
}

export type LoginOutcome =
  | {
      outcome: 'logged-in';
      pinId: string;
      pinHash: string;
      result: LoginResult;
      identity: IdentityChanges;
      origin: Origin;
      account: AccountMade | 'unknown' | null;
    }
  | { outcome: 'confirmation-asked'; pinId: string; pinHash: string; origin: Origin; expiresAt: number; question: string }
  /** a bare YES / NO while several questions are open: which one? */
  | { outcome: 'which-one'; open: OpenQuestion[] }
  | { outcome: 'denied'; pinId: string; pinHash: string; origin: Origin }
  /** the sender's account is blocked (src/accounts/block.ts): nobody signed in, the registration ended denied */
  | { outcome: 'blocked'; pinId: string; pinHash: string; origin: Origin; userId: string }
  | { outcome: 'unanswered' }
  /** STOP: `userId` the sender's account whose sessions ended (null: none known) */
  | { outcome: 'signed-out'; sessions: number; userId: string | null }
  /** a retry of a job whose login was collected or cancelled; `signedIn` while its session is open */
  | { outcome: 'already-done'; pinId: string; signedIn: boolean }
  | { outcome: 'duplicate' }
  /** the message names no identifier of its sender (no phone, LID or user id) */
  | { outcome: 'no-identity' }
  | { outcome: 'not-a-code' }
  | { outcome: 'no-match' }
  /** a number change: `userId` the account moved ('' when nobody known had the old number) */
  | { outcome: 'number-changed'; userId: string; changed: boolean; conflict: boolean };

/**
 * The account a login made, as the directory indexes it (accounts/directory.ts); null: it existed
 * before; 'unknown': a retry that found its login stored cannot tell (the directory reads the record).
 */
export interface AccountMade {
  id: string;
  name: string;
  surname: string;
  /** ms since epoch */
  createdAt: number;
}

/** What resolving the sender's account did (lib/identity-steps.lua), for logs and metrics. */
export interface IdentityChanges {
  /** kinds of the identifiers newly linked to the account */
  linked: string[];
  /** the phone's account belonged to someone else (another LID / user id): a new account was made instead */
  recycled: boolean;
  /** a stable identifier of the message was linked to another account and left there */
  conflict: boolean;
  /** the account's phone was replaced by the message's (its stable id came with a new number) */
  numberChanged: boolean;
}

/** The identity steps lost a race with other messages of the person too often (a cluster only): retried as a job. */
export class IdentityBusyError extends Error {}

export interface LoginSettings {
  graceSeconds: number;
  /** ask in the chat before a matched code logs in (LOGIN_CONFIRMATION) */
  confirm: boolean;
  /** the claim one call per step (Redis Cluster: each step's keys in one slot) */
  stepwise?: boolean;
  /** how long a message id is remembered (MESSAGE_ID_SECONDS); 24 h when not given */
  messageIdSeconds?: number;
}

/** Gateways retry for a long time (Evolution ~20 minutes, Meta days): message ids are remembered 24 h by default (MESSAGE_ID_SECONDS). */
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

  /** `intent`: what the message's text says, when the caller has read it already. */
  async process(job: InboundJob, intent: ChatIntent = chatIntent(job.message.text)): Promise<LoginOutcome> {
    const { message, nonce } = job;
    const ids = identitiesOf(message);
    if (ids.length === 0) return { outcome: 'no-identity' };
    const renumber = message.numberChanged === true && (message.phone !== null || message.newUserId !== undefined);
    if (!renumber && intent.kind === 'stop') {
      const { userId, sessions } = await this.sessions.endAllOfSender(ids, { client: message.channel });
      return { outcome: 'signed-out', sessions, userId };
    }
    // YES / NO are answers even with confirmation off: an account with the admin role is always asked;
    // the person's own commands are not a login's (accounts/chat-rights.ts)
    if (!renumber && (intent.kind === 'other' || isCommand(intent))) return { outcome: 'not-a-code' };
    const { name, surname } = splitName(message.displayName);
    const graceMs = this.settings.graceSeconds * 1000;
    // an identifier change: found by its old stable ids or the old number, moved to the new number, linked to the new BSUID
    const sender = renumber ? { ...identityState({ ...message, phone: message.previousPhone ?? null }), phone: '' } : identityState(message);
    if (renumber && message.phone !== null) sender.ids.push(['phone', message.phone, 'new']);
    if (renumber && message.newUserId !== undefined && message.newUserId !== message.userId) sender.ids.push(['bsuid', message.newUserId, 'new']);

    const claim = await this.chain.claim({
      msgId: message.id,
      nonce,
      emojiHash: intent.kind === 'code' ? emojiHash(intent.emoji) : '',
      ...sender,
      newUid: newUserId(),
      name,
      surname,
      newSid: newShortId(),
      newRefreshJti: newShortId(),
      sessTtl: this.tokens.refreshTtl * 1000,
      grace: graceMs,
      dedupTtl: this.settings.messageIdSeconds ?? DEDUP_TTL_SECONDS,
      maxSessions: MAX_SESSIONS_PER_USER,
      mode: renumber ? 'renumber' : intent.kind === 'yes' || intent.kind === 'no' ? intent.kind : 'code',
      question: (intent.kind === 'yes' || intent.kind === 'no') && intent.question !== undefined ? intent.question : '',
      receivedAt: job.receivedAt,
      draw: randomInt(90),
      confirm: this.settings.confirm,
    });
    switch (claim.kind) {
      case 'duplicate':
        return { outcome: 'duplicate' };
      case 'busy':
        throw new IdentityBusyError("the sender's identifiers kept changing while being linked");
      case 'renumbered':
        return { outcome: 'number-changed', userId: claim.userId, changed: claim.changed, conflict: claim.conflict };
      case 'ask':
        return {
          outcome: 'confirmation-asked',
          pinId: claim.pinId,
          pinHash: claim.pinHash,
          origin: decodeOrigin(claim.origin),
          expiresAt: claim.expiresAt,
          question: claim.question,
        };
      case 'which':
        return { outcome: 'which-one', open: claim.open.map((q) => ({ question: q.question, origin: decodeOrigin(q.origin), expiresAt: q.expiresAt })) };
      case 'denied':
        return { outcome: 'denied', pinId: claim.pinId, pinHash: claim.pinHash, origin: decodeOrigin(claim.origin) };
      case 'blocked':
        return { outcome: 'blocked', pinId: claim.pinId, pinHash: claim.pinHash, origin: decodeOrigin(claim.origin), userId: claim.userId };
      case 'unanswered':
        // with confirmation off only an admin is ever asked: a YES / NO answering nothing is no answer
        return this.settings.confirm ? { outcome: 'unanswered' } : { outcome: 'not-a-code' };
      case 'done':
        return { outcome: 'already-done', pinId: '', signedIn: claim.sessionOpen };
      case 'completed':
        // a retry of this job after its login was stored: announce it again (at least once)
        return {
          outcome: 'logged-in',
          pinId: claim.pinId,
          pinHash: claim.pinHash,
          result: parseLoginResult(claim.resultJson),
          identity: { linked: [], recycled: false, conflict: false, numberChanged: false },
          origin: decodeOrigin(claim.origin),
          account: 'unknown',
        };
      case 'no_match':
        return { outcome: 'no-match' };
      case 'claimed':
        break;
    }
    const { pinId, pinHash, sessionId, refreshJti, user } = claim;
    const roles = parseRoles(user.rolesJson, ['user']);
    const pair = this.tokens.issuePair(user.id, sessionId, roles, refreshJti);
    const result: LoginResult = {
      token: pair.token,
      refreshToken: pair.refreshToken,
      user: { id: user.id, name: user.name, ...(user.phone !== '' ? { phone: user.phone } : {}), roles },
    };
    const identity: IdentityChanges = { linked: claim.linked, recycled: claim.recycled, conflict: claim.conflict, numberChanged: claim.numberChanged };
    const done = await this.scripts.run('complete-login', [this.keys.registration(pinHash)], [message.id, JSON.stringify(result), graceMs]);
    if (done !== 'completed') return { outcome: 'already-done', pinId, signedIn: false };
    const account = claim.created ? { id: user.id, name: user.name, surname: user.surname, createdAt: user.createdAt } : null;
    return { outcome: 'logged-in', pinId, pinHash, result, identity, origin: decodeOrigin(claim.origin), account };
  }
}
