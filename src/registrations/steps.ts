import type { Keys } from '../redis/keys.js';
import type { CancelFindReply, CheckReply, Limited, RegisterAnswer, Scripts } from '../redis/scripts.js';
import type { BudgetSet } from '../security/limits.js';

/**
 * register-pin, check-login and cancel-auth as sequences of one-slot scripts
 * (src/redis/scripts/*.lua), one call each on every topology: the IP group's budgets
 * (budget-take, then budget-settle once the answer is known), the registration with the PIN's
 * own budgets, the emoji string, the active bucket. Each call is idempotent or decides again,
 * so a crash between two leaves nothing a retry cannot finish.
 */

/**
 * How long a request waits for wrong-guess points held by requests in flight (each holds one
 * for a few milliseconds, lib/budgets.lua) before it is refused as if the budget were spent.
 */
const BUSY_WAIT_MS = 2000;
const BUSY_RETRY_MS = 5;

/** budget-take on the IP group's budgets; null when the request may go on (or spends none). */
async function take(scripts: Scripts, b: BudgetSet): Promise<Limited | null> {
  if (b.groupKeys.length === 0) return null;
  const until = Date.now() + BUSY_WAIT_MS;
  for (;;) {
    const out = await scripts.run('budget-take', b.groupKeys, b.groupArgs);
    if (out.kind === 'ok') return null;
    if (out.kind === 'limited') return out;
    if (Date.now() >= until) return { kind: 'limited', waitMs: 1000, index: out.index };
    await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
  }
}

/** budget-settle after the answer: gives back what the answer does not cost (lib/budgets.lua). */
async function settle(scripts: Scripts, b: BudgetSet, answer: string): Promise<void> {
  if (b.groupKeys.length > 0) await scripts.run('budget-settle', b.groupKeys, [answer, ...b.groupModes]);
}

export async function check(scripts: Scripts, keys: Keys, b: BudgetSet, pinHash: string, keepMs: number): Promise<CheckReply> {
  const refused = await take(scripts, b);
  if (refused) return refused;
  const out = await scripts.run('check', [keys.registration(pinHash), ...b.pinKeys], [...b.pinArgs, keepMs]);
  await settle(scripts, b, out.kind);
  return out;
}

export interface RegisterRequest {
  pinHash: string;
  /** the client's emoji string, hashed; '' when the server draws one */
  emojiHash: string;
  mode: 'client' | 'server';
  newPinId: string;
  ttlMs: number;
  memoryMs: number;
  origin: string;
  /** hashes of this round's drawn candidates (server draws), tried in order */
  candidates: string[];
  /** the place of the first of them among all the attempt's candidates (0 in the first round) */
  candidateOffset?: number;
  /**
   * A keyed attempt (Idempotency-Key): its tag (the decoy memory's name) and the hashes of every
   * candidate it may have drawn in any round, so a retry finds the registration it made.
   */
  attempt?: { tag: string; candidates: string[] };
}

/** register's answer; 'retry': every drawn candidate of this round was taken (draw again). */
export type RegisterResult = Limited | { kind: 'refused' } | { kind: 'retry' } | RegisterAnswer;

/**
 * Budgets, decide (register 'read'), hold the emoji string, join the active bucket, decide
 * again and write (register 'write'): the registration is written last, so a crash before
 * leaves only an emoji string held for it (the client's retry holds it again) and an active
 * entry the sweep drops. A decoy makes the same calls and stores nothing.
 */
export async function register(scripts: Scripts, keys: Keys, b: BudgetSet, r: RegisterRequest): Promise<RegisterResult> {
  const refused = await take(scripts, b);
  if (refused) return refused;
  const rk = keys.registration(r.pinHash);
  const regKeys = r.attempt ? [rk, keys.attemptDecoy(r.pinHash, r.attempt.tag)] : [rk];
  const common = [r.emojiHash, r.mode, r.newPinId, r.ttlMs, r.memoryMs, r.origin, r.attempt ? r.attempt.candidates.join(' ') : ''];
  const read = await scripts.run('register', regKeys, ['read', ...common]);
  if (read.kind === 'answer' || read.kind === 'refused') return read;
  const { expiresAt } = read;
  // the strings to try: the client's own (index 0), or this round's candidates (index from 1)
  const offset = r.candidateOffset ?? 0;
  const tries = r.emojiHash !== '' ? [{ hash: r.emojiHash, index: 0 }] : r.candidates.map((hash, i) => ({ hash, index: offset + i + 1 }));
  let held: { hash: string; index: number; outcome: 'created' | 'contested' | 'decoy' } | undefined;
  for (const t of tries) {
    const kind = read.kind === 'decoy' ? 'decoy' : r.emojiHash !== '' ? 'own' : 'draw';
    const out = await scripts.run('emoji-hold', [keys.emoji(t.hash)], [r.pinHash, kind, expiresAt]);
    if (out === 'taken') continue;
    // a decoy holds no string: it shows the client's own or the first candidate
    held = { hash: out === 'decoy' ? '' : t.hash, index: t.index, outcome: out };
    break;
  }
  if (!held) return { kind: 'retry' };
  const member = held.outcome === 'decoy' ? `~${r.newPinId}` : r.pinHash;
  await scripts.run('active-add', [keys.active(keys.activeBucket(r.pinHash))], [member, expiresAt]);
  const written = await scripts.run('register', regKeys, ['write', ...common, expiresAt, held.outcome, held.index, held.hash]);
  // write never answers 'create' / 'decoy' (those are read's): only a final answer or a refusal
  return written.kind === 'answer' || written.kind === 'refused' ? written : { kind: 'retry' };
}

/** What cancel-find found: the registration and what goes with it ('' for none). */
export type CancelFound = Extract<CancelFindReply, { kind: 'cancelled' }>;

/** First part of cancel-auth: budgets and "is it pending?" (writes nothing but budgets). */
export async function cancelFind(scripts: Scripts, keys: Keys, b: BudgetSet, pinHash: string): Promise<Limited | CancelFindReply> {
  const refused = await take(scripts, b);
  if (refused) return refused;
  const out = await scripts.run('cancel-find', [keys.registration(pinHash)]);
  await settle(scripts, b, out.kind);
  return out;
}

/**
 * Second part of cancel-auth: free the emoji string and the chat question, close the
 * uncollected login's session, leave the active bucket, and delete the registration last, so a
 * crash anywhere leaves it for the client's retry to cancel again.
 */
export async function cancelCleanup(scripts: Scripts, keys: Keys, pinHash: string, f: CancelFound): Promise<'cancelled' | 'changed'> {
  if (f.emojiHash !== '') await scripts.run('release', [keys.emoji(f.emojiHash)], [pinHash]);
  if (f.askedOf !== '') await scripts.run('question-release', [keys.confirmation(f.askedOf)], [pinHash]);
  if (f.sessionId !== '' && f.userId !== '') await closeSession(scripts, keys, f.userId, f.sessionId);
  await scripts.run('active-remove', [keys.active(keys.activeBucket(pinHash))], [pinHash]);
  return scripts.run('cancel-delete', [keys.registration(pinHash)], [f.pinId, f.state]);
}

/** session-close: one session of a user (its hash, its last rotation, its index entry). */
export async function closeSession(scripts: Scripts, keys: Keys, userId: string, sessionId: string): Promise<void> {
  await scripts.run('session-close', [keys.session(userId, sessionId), keys.rotation(userId, sessionId), keys.userSessions(userId)], [sessionId]);
}
