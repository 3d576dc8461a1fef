import type { Redis } from 'ioredis';
import { AppError } from '../errors.js';
import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';
import type { ExpirySchedule } from '../queues/expiry-schedule.js';
import { newShortId } from '../auth/ids.js';
import { emojiHash } from './emoji.js';
import type { PinHasher } from './pin.js';
import type { LoginResult } from '../auth/login-result.js';

/** The registration state machine (pending → verified | expired | cancelled), shared by HTTP and sockets. */
export interface RegisterOutcome {
  pinId: string;
  /** seconds left */
  expiresIn: number;
  created: boolean;
  /** a login already happened and waits to be collected (re-join after reconnecting) */
  verified: boolean;
}

export type CheckOutcome = { state: 'pending'; pinId: string } | { state: 'verified'; pinId: string; result: LoginResult };

export interface RegistrationSettings {
  pinTtlSeconds: number;
  expiredMemorySeconds: number;
}

export class Registrations {
  constructor(
    private readonly redis: Redis,
    private readonly scripts: Scripts,
    private readonly keys: Keys,
    private readonly hasher: PinHasher,
    private readonly expiry: ExpirySchedule,
    private readonly settings: RegistrationSettings,
  ) {}

  /** The PIN's Redis identity (keyed hash), e.g. for per-PIN rate limits and socket rooms. */
  pinKey(pin: string): string {
    return this.hasher.hash(pin);
  }

  async register(pin: string, emojiString: string): Promise<RegisterOutcome> {
    const pinHash = this.hasher.hash(pin);
    const [outcome = '', pinId = '', msLeftRaw = '0', state = '', expiresAt = '0'] = await this.scripts.strings('register', [
      this.keys.prefix,
      pinHash,
      emojiHash(emojiString),
      newShortId(),
      this.settings.pinTtlSeconds * 1000,
      this.settings.expiredMemorySeconds * 1000,
    ]);
    if (outcome === 'conflict') throw new AppError('PIN_CONFLICT');
    const msLeft = Math.max(0, Number(msLeftRaw));
    // Created or still pending: its second's sweep must be queued (idempotent, so a retried
    // registration re-queues a sweep that failed to queue).
    if (state === 'p') await this.expiry.ensure(Number(expiresAt));
    return {
      pinId,
      expiresIn: outcome === 'created' ? this.settings.pinTtlSeconds : Math.ceil(msLeft / 1000),
      created: outcome === 'created',
      verified: state === 'v',
    };
  }

  /** Polling check; a verified result is consumed by this call. */
  async check(pin: string): Promise<CheckOutcome> {
    const [outcome, pinId = '', result = ''] = await this.scripts.strings('check', [this.keys.prefix, this.hasher.hash(pin)]);
    switch (outcome) {
      case 'pending':
        return { state: 'pending', pinId };
      case 'verified':
        return { state: 'verified', pinId, result: JSON.parse(result) as LoginResult };
      case 'expired':
        throw new AppError('PIN_EXPIRED');
      default:
        throw new AppError('PIN_NOT_FOUND');
    }
  }

  /** The uncollected result of a verified registration, without consuming it (socket re-join). */
  async peekResult(pin: string): Promise<LoginResult | null> {
    const raw = await this.redis.hget(this.keys.registration(this.hasher.hash(pin)), 'r');
    return raw ? (JSON.parse(raw) as LoginResult) : null;
  }

  async cancel(pin: string): Promise<{ pinId: string }> {
    const [outcome, pinId = ''] = await this.scripts.strings('cancel', [this.keys.prefix, this.hasher.hash(pin)]);
    if (outcome === 'expired') throw new AppError('PIN_EXPIRED');
    if (outcome !== 'cancelled') throw new AppError('PIN_NOT_FOUND');
    return { pinId };
  }

  /** Registrations whose lifetime has not ended, from the sorted set (no SCAN). */
  async activeCount(): Promise<number> {
    return this.redis.zcount(this.keys.active(), Date.now(), '+inf');
  }
}
