import type { Keys } from '../redis/keys.js';
import { fixed, type StepArg, type Step } from '../redis/scripts.js';
import type { BudgetSet } from '../security/limits.js';

/**
 * The steps of register-pin, check-login and cancel-auth (src/redis/scripts/steps/*.lua), each
 * on one slot: the IP group's budgets (budget-take, then budget-settle once the answer is
 * known), the registration with the PIN's own budget, the emoji string, the active bucket.
 * One Redis runs each phase as one script; a cluster runs them one call each (Scripts.phase).
 */

/** budget-take's and budget-settle's arguments, made once per kind of request and mode. */
interface BudgetStepArgs {
  take: readonly StepArg[];
  settle: readonly StepArg[];
}

/** by a kind of request's (shared, read-only) group arguments (limits.ts), one per mode (split or not) */
const stepArgs = new WeakMap<readonly StepArg[], [BudgetStepArgs | undefined, BudgetStepArgs | undefined]>();

function budgetStepArgs(b: BudgetSet, split: boolean): BudgetStepArgs {
  let byMode = stepArgs.get(b.groupArgs);
  if (byMode === undefined) stepArgs.set(b.groupArgs, (byMode = [undefined, undefined]));
  const mode = split ? 1 : 0;
  return (byMode[mode] ??= {
    take: [...b.groupArgs, fixed(split ? '1' : '0')],
    settle: [...b.groupModes, fixed(split ? '1' : '0'), ...b.groupWindows],
  });
}

/**
 * budget-take on the IP group's budgets (no step when the request spends none). `split`: the
 * steps run one call each (a cluster), so the wrong-guess point is reserved before the guess is
 * judged; in one script it is spent after, on a miss (lib/budgets.lua).
 */
function take(b: BudgetSet, split: boolean): Step[] {
  return b.groupKeys.length === 0 ? [] : [{ step: 'budget-take', keys: b.groupKeys, args: budgetStepArgs(b, split).take }];
}

/** budget-settle after the answer: spends or gives back what the answer costs or does not. */
function settle(b: BudgetSet, split: boolean): Step[] {
  return b.groupKeys.length === 0 ? [] : [{ step: 'budget-settle', keys: b.groupKeys, args: budgetStepArgs(b, split).settle }];
}

export function checkSteps(keys: Keys, b: BudgetSet, pinHash: string, keepMs: number, split: boolean): Step[] {
  return [...take(b, split), { step: 'check', keys: [keys.registration(pinHash), ...b.pinKeys], args: [...b.pinArgs, fixed(keepMs)] }, ...settle(b, split)];
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

/**
 * Budgets, decide (read), hold the emoji string, join the active bucket, decide again and
 * write: the registration is written last, so a crash before leaves only an emoji string held
 * for it (the client's retry holds it again) and an active entry the sweep drops.
 */
export function registerSteps(keys: Keys, b: BudgetSet, r: RegisterRequest, split: boolean): Step[] {
  const rk = keys.registration(r.pinHash);
  const regKeys = r.attempt ? [rk, keys.attemptDecoy(r.pinHash, r.attempt.tag)] : [rk];
  const retry = r.attempt ? r.attempt.candidates.join(' ') : '';
  const common: StepArg[] = [r.emojiHash, fixed(r.mode), r.newPinId, fixed(r.ttlMs), fixed(r.memoryMs), r.origin, retry];
  const emoji: Step[] =
    r.emojiHash !== ''
      ? [{ step: 'emoji', keys: [keys.emoji(r.emojiHash)], args: [r.pinHash, r.emojiHash, fixed('own'), fixed(0)] }]
      : r.candidates.map((e, i) => ({ step: 'emoji', keys: [keys.emoji(e)], args: [r.pinHash, e, fixed('draw'), fixed((r.candidateOffset ?? 0) + i + 1)] }));
  return [
    ...take(b, split),
    { step: 'registration', keys: regKeys, args: [fixed('read'), ...common] },
    ...emoji,
    { step: 'active-add', keys: [keys.active(keys.activeBucket(r.pinHash))], args: [r.pinHash, r.newPinId] },
    // in one script nothing comes between read and write: the write need not decide again
    { step: 'registration', keys: regKeys, args: [fixed(split ? 'write' : 'create'), ...common] },
  ];
}

/** First phase of cancel-auth: budgets and "is it pending?" (writes nothing but budgets). */
export function cancelSteps(keys: Keys, b: BudgetSet, pinHash: string, split: boolean): Step[] {
  return [...take(b, split), { step: 'cancel', keys: [keys.registration(pinHash)], args: [] }, ...settle(b, split)];
}

/** What the cancel step found: the registration and what goes with it ('' for none). */
export interface CancelFound {
  pinId: string;
  state: string;
  emojiHash: string;
  phone: string;
  sid: string;
  userId: string;
}

/**
 * Second phase of cancel-auth: free the emoji string and the phone's chat question, close the
 * uncollected login's session, leave the active bucket, and delete the registration last, so a
 * crash anywhere leaves it for the client's retry to cancel again.
 */
export function cancelCleanupSteps(keys: Keys, pinHash: string, f: CancelFound): Step[] {
  const steps: Step[] = [];
  if (f.emojiHash !== '') steps.push({ step: 'release', keys: [keys.emoji(f.emojiHash)], args: [pinHash] });
  if (f.phone !== '') steps.push({ step: 'question-release', keys: [keys.confirmation(f.phone)], args: [pinHash] });
  if (f.sid !== '' && f.userId !== '') {
    steps.push({ step: 'session-close', keys: [keys.session(f.userId, f.sid), keys.rotation(f.userId, f.sid), keys.userSessions(f.userId)], args: [f.sid] });
  }
  steps.push({ step: 'active-remove', keys: [keys.active(keys.activeBucket(pinHash))], args: [pinHash] });
  steps.push({ step: 'cancel-delete', keys: [keys.registration(pinHash)], args: [f.pinId, f.state] });
  return steps;
}
