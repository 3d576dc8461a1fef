import type { RedisClient } from '../redis/connection.js';
import { AppError } from '../errors.js';
import { ACTIVE_BUCKETS, type Keys } from '../redis/keys.js';
import { cancelCleanup, cancelFind, check, register, type RegisterResult } from './steps.js';
import type { Limited, Scripts } from '../redis/scripts.js';
import { newShortId } from '../ids.js';
import type { RegistrationPolicy } from '../config.js';
import type { BudgetSet, Limits } from '../security/limits.js';
import type { ProbeVia, Probes } from '../security/probes.js';
import { emojiHash, normalEmojiHash } from './emoji.js';
import { deriveEmojiStrings, drawEmojiStrings, drawnBits } from './emoji-alphabet.js';
import { pinBits, type PinHasher } from './pin.js';
import { parseLoginResult, type LoginResult } from './login-result.js';
import { encodeOrigin, type Origin } from './origin.js';

/** The registration state machine (pending → verified | expired | cancelled), shared by HTTP and sockets. */
export interface RegisterOutcome {
  pinId: string;
  /** seconds left */
  expiresIn: number;
  /** the emoji string the person must send (the client's own, or the one the server drew) */
  emojiString: string;
  /** a new registration, as far as the caller may know (a decoy says so too) */
  created: boolean;
  /** a login already happened and waits to be collected (re-join after reconnecting) */
  verified: boolean;
  /** the chat code matched; the person is being asked to confirm in the chat */
  awaitingConfirmation: boolean;
  /**
   * The caller does not hold the PIN's live registration (it named the PIN without its emoji
   * string): it got an answer shaped like a creation and nothing was stored. Never told to the
   * caller; a socket must not follow the registration's events.
   */
  decoy: boolean;
}

export type CheckOutcome =
  | { state: 'pending'; pinId: string }
  | { state: 'awaiting'; pinId: string }
  /** resultJson: the LoginResult as the worker kept it (JSON), handed on unparsed */
  | { state: 'verified'; pinId: string; userId: string; resultJson: string };

const UNKNOWN_ORIGIN: Origin = { device: 'unknown device', ip: 'unknown network' };

/** Who is asking, for budgets and probe reports. */
export interface Caller {
  ip: string;
  via: ProbeVia;
  /** the registering request's device and masked address (chat confirmation, sessions list) */
  origin?: Origin;
}

export interface RegistrationSettings {
  pinTtlSeconds: number;
  expiredMemorySeconds: number;
  policy: RegistrationPolicy;
  /** a collected result is kept this long for a retry whose answer was lost (0: not kept) */
  collectRetrySeconds: number;
}

/**
 * Server-drawn candidates per round; the script takes the first one no registration holds. A
 * drawn string of 40 bits or more (EMOJI_LENGTH 7 or more) is held already with probability
 * under 10^-5 even with 10 million registrations pending, so one a round does, and a second
 * round (one more script call) is the rare cost. Shorter strings have a space that pending
 * registrations can fill a noticeable part of, so they are drawn four at a time.
 */
export const candidatesPerRound = (length: number): number => (drawnBits(length) >= 40 ? 1 : 4);
/** Rounds of candidates before giving up (all taken at once: practically never). */
const DRAW_ROUNDS = 3;
/** Cancels run again when a login claimed the registration between their two parts; it can't keep happening. */
const CANCEL_ROUNDS = 3;

/**
 * What a registration needs of the expiry sweep: that the second it ends in gets swept. Declared
 * here and implemented by the queues' ExpirySchedule (src/queues/expiry-schedule.ts), which sits above.
 */
export interface ExpiryScheduler {
  ensure(expiresAt: number): Promise<void>;
}

export class Registrations {
  constructor(
    private readonly redis: RedisClient,
    private readonly scripts: Scripts,
    private readonly keys: Keys,
    private readonly hasher: PinHasher,
    private readonly expiry: ExpiryScheduler,
    private readonly limits: Limits,
    private readonly probes: Probes,
    private readonly settings: RegistrationSettings,
  ) {}

  /** The PIN's Redis identity (keyed hash), e.g. for per-PIN rate limits and socket rooms. */
  pinKey(pin: string): string {
    return this.hasher.hash(pin);
  }

  /**
   * The hash a PIN's registration lives under: the current key's, or during a PIN-key rotation
   * the previous key's when a registration made before the switch is still there.
   */
  private async located(pin: string): Promise<string> {
    const previous = this.hasher.previousHash(pin);
    if (previous === null) return this.hasher.hash(pin);
    return (await this.redis.exists(this.keys.registration(previous))) === 1 ? previous : this.hasher.hash(pin);
  }

  /**
   * Registers, re-joins, or answers a decoy; see registration.lua for why no answer is an oracle.
   * `emojiString` undefined: the server draws one. `idempotencyKey` (the client's, the same on
   * every retry of one attempt; without one, the caller's network group, channel and device
   * stand for it): the drawn candidates are derived from it and the PIN, so a retry of an
   * attempt that was applied (its answer lost) finds its registration and gets the same pinId
   * and emoji string; a decoy answered to it is remembered, so its repeat looks the same.
   */
  async register(pin: string, emojiString: string | undefined, caller: Caller, idempotencyKey?: string): Promise<RegisterOutcome> {
    const { policy } = this.settings;
    if (pinBits(pin) < policy.pinMinBits) {
      const details = [
        { field: 'pin', message: `is too easy to guess: use a long random value (at least ${policy.pinMinBits} bits, e.g. 22 base64url characters)` },
      ];
      throw new AppError('VALIDATION_ERROR', `Invalid data: pin ${details[0]!.message}`, { details });
    }
    const pinHash = await this.located(pin);
    const budgets = this.limits.forRegister(this.limits.group(caller.ip));
    const perRound = candidatesPerRound(policy.emojiLength);
    // Without a key, the identical request (same PIN, network and device) is one attempt: its
    // retry after a lost answer (a 503) finds the registration the first try made, while anyone
    // else naming the PIN still gets a decoy (SECURITY.md, "Keyless retries")
    const key = idempotencyKey ?? (emojiString === undefined ? `keyless\n${budgets.group}\n${caller.via}\n${caller.origin?.device ?? ''}` : undefined);
    const attempt = key === undefined ? undefined : this.hasher.attempt(pin, key);
    // a keyed attempt's candidates of every round, made up front: a retry must recognise any of them
    const derived = attempt && emojiString === undefined ? deriveEmojiStrings(attempt.seed, perRound * DRAW_ROUNDS, policy.emojiLength) : [];
    const derivedHashes = derived.map(normalEmojiHash);
    let out: RegisterResult = { kind: 'retry' };
    let drawn: string[] = [];
    let offset = 0;
    for (let round = 0; round < DRAW_ROUNDS && out.kind === 'retry'; round++) {
      offset = attempt ? round * perRound : 0;
      drawn = emojiString !== undefined ? [] : attempt ? derived.slice(offset, offset + perRound) : drawEmojiStrings(perRound, policy.emojiLength);
      out = await register(this.scripts, this.keys, budgets, {
        pinHash,
        emojiHash: emojiString === undefined ? '' : emojiHash(emojiString),
        mode: policy.emojiChoice,
        newPinId: newShortId(),
        ttlMs: this.settings.pinTtlSeconds * 1000,
        memoryMs: this.settings.expiredMemorySeconds * 1000,
        origin: encodeOrigin(caller.origin ?? UNKNOWN_ORIGIN),
        candidates: attempt ? derivedHashes.slice(offset, offset + perRound) : drawn.map(normalEmojiHash),
        candidateOffset: offset,
        attempt: attempt && { tag: attempt.tag, candidates: derivedHashes },
      });
      if (out.kind === 'limited') this.refuse(out, budgets, caller);
    }
    if (out.kind === 'retry') throw new AppError('INTERNAL_ERROR', undefined, { cause: new Error('every drawn emoji string was taken') });
    if (out.kind === 'refused') {
      const details = [{ field: 'emojiString', message: 'is chosen by the server here: omit it (send it only to re-join your own registration)' }];
      throw new AppError('VALIDATION_ERROR', `Invalid data: emojiString ${details[0]!.message}`, { details });
    }
    const { outcome, pinId, state, expiresAt, candidateIndex: index } = out;
    if (outcome === 'denied') throw new AppError('LOGIN_DENIED');
    if (outcome === 'decoy' || outcome === 'again') this.probes.collision(budgets.group, caller.via, 'pin');
    if (outcome === 'contested') this.probes.collision(budgets.group, caller.via, 'emoji');
    const msLeft = Math.max(0, out.msLeft);
    // Created or still pending: its second's sweep must be queued (idempotent, so a retried
    // registration re-queues a sweep that failed to queue). A decoy does the same, so it takes
    // as long as a creation.
    if (state === 'pending' || state === 'awaiting') await this.expiry.ensure(expiresAt);
    // candidate indexes count from the first round's first for a keyed attempt, else this round's
    const candidates = attempt ? derived : drawn;
    const again = outcome === 'existing' || outcome === 'again';
    return {
      pinId,
      expiresIn: again ? Math.ceil(msLeft / 1000) : this.settings.pinTtlSeconds,
      emojiString: index > 0 ? candidates[index - 1]! : (emojiString ?? ''),
      created: !again,
      verified: state === 'verified',
      awaitingConfirmation: state === 'awaiting',
      decoy: outcome === 'decoy' || outcome === 'again',
    };
  }

  /**
   * Polling check; a verified result is consumed by this call (a retry within the collect
   * window gets it again: its first answer may have been lost after Redis handed it out).
   * Without a caller (a PIN the server holds itself, e.g. the OpenID login page's) no budget is spent.
   */
  async check(pin: string, caller?: Caller): Promise<CheckOutcome> {
    const pinHash = await this.located(pin);
    const budgets = caller ? this.limits.forCheck(this.limits.group(caller.ip), pinHash) : this.limits.none();
    const out = await check(this.scripts, this.keys, budgets, pinHash, this.settings.collectRetrySeconds * 1000);
    switch (out.kind) {
      case 'limited':
        return this.refuse(out, budgets, caller);
      case 'pending':
        return { state: 'pending', pinId: out.pinId };
      case 'awaiting':
        return { state: 'awaiting', pinId: out.pinId };
      case 'denied':
        throw new AppError('LOGIN_DENIED');
      case 'failed':
        throw new AppError('LOGIN_FAILED');
      case 'verified': {
        const { pinId, resultJson, userId } = out;
        // handed on unparsed, so checked for the one shape it is written in: a JSON object
        if (!resultJson.startsWith('{') || !resultJson.endsWith('}'))
          throw new AppError('INTERNAL_ERROR', undefined, { cause: new Error(`registration ${pinId} holds no login result`) });
        return { state: 'verified', pinId, userId, resultJson };
      }
      case 'expired':
        throw new AppError('PIN_EXPIRED');
      case 'not_found':
        if (caller) this.probes.wrongGuess(budgets.group, caller.via, 'check');
        throw new AppError('PIN_NOT_FOUND');
    }
  }

  /** The uncollected result of a verified registration, without consuming it (socket re-join). */
  async peekResult(pin: string): Promise<LoginResult | null> {
    const raw = await this.redis.hget(this.keys.registration(await this.located(pin)), 'result');
    return raw ? parseLoginResult(raw) : null;
  }

  /**
   * Cancels in two parts (steps.ts): "is it pending?" with the budgets, then the
   * cleanup, which deletes the registration last. A login that claims it between the two is
   * seen by the last step; the cancel then runs again (without spending the budgets twice) and
   * also closes that login's session.
   */
  async cancel(pin: string, caller: Caller): Promise<{ pinId: string }> {
    const budgets = this.limits.forCancel(this.limits.group(caller.ip));
    const pinHash = await this.located(pin);
    for (let round = 0, spend = budgets; round < CANCEL_ROUNDS; round++, spend = this.limits.none()) {
      const found = await cancelFind(this.scripts, this.keys, spend, pinHash);
      if (found.kind === 'limited') this.refuse(found, budgets, caller);
      if (found.kind === 'expired') throw new AppError('PIN_EXPIRED');
      if (found.kind !== 'cancelled') {
        this.probes.wrongGuess(budgets.group, caller.via, 'cancel');
        throw new AppError('PIN_NOT_FOUND');
      }
      if ((await cancelCleanup(this.scripts, this.keys, pinHash, found)) === 'cancelled') return { pinId: found.pinId };
    }
    throw new AppError('INTERNAL_ERROR', undefined, { cause: new Error('the registration kept changing while it was cancelled') });
  }

  /** Throws RATE_LIMITED (and reports it) for a budget's refusal. */
  private refuse(out: Limited, budgets: BudgetSet, caller: Caller | undefined): never {
    const { limit, error } = this.limits.refusal(budgets, out.waitMs, out.index);
    if (caller) this.probes.rateLimited(budgets.group, caller.via, limit, error.retryAfter ?? 1);
    throw error;
  }

  /**
   * activeCount as /health publishes it: one figure for every node, counted at most once every
   * `refreshMs` (kept in Redis that long), so it never follows one registration as it is made;
   * 0: counted on every call.
   */
  async publishedActiveCount(refreshMs: number): Promise<number> {
    if (refreshMs === 0) return this.activeCount();
    const key = this.keys.activePinsFigure();
    const kept = await this.redis.get(key);
    if (kept !== null) return Number(kept);
    const count = await this.activeCount();
    // the first node to count in a window sets the figure, another one reads it; a Redis that
    // refuses writes (health: degraded) still gets its count
    const first = await this.redis.set(key, count, 'PX', refreshMs, 'NX').then(
      (r) => r === 'OK',
      () => true,
    );
    if (first) return count;
    return Number((await this.redis.get(key)) ?? count);
  }

  /**
   * Registrations (and decoys, which count alike: registration.lua) whose lifetime has not
   * ended, from the sorted set (no SCAN).
   */
  async activeCount(): Promise<number> {
    const now = Date.now();
    const counts = await Promise.all(Array.from({ length: ACTIVE_BUCKETS }, (_, b) => this.redis.zcount(this.keys.active(b), now, '+inf')));
    return counts.reduce((a, b) => a + b, 0);
  }
}
