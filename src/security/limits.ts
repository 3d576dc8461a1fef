import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimitConfig } from '../config.js';
import { AppError, type ErrorCode } from '../errors.js';
import type { Keys } from '../redis/keys.js';

/**
 * Every rate limit of the service, Redis-backed (shared by all nodes) through
 * rate-limiter-flexible, except the per-connection socket budget, which lives with the socket.
 * Over a limit: AppError RATE_LIMITED carrying the seconds to wait (Retry-After).
 */
export type LimitName = 'register' | 'check' | 'checkPin' | 'unknownPin' | 'send' | 'reply';

export class Limits {
  private readonly limiters: Record<LimitName, RateLimiterRedis>;

  constructor(redis: Redis, keys: Keys, private readonly cfg: RateLimitConfig) {
    const make = (name: string, points: number, duration: number): RateLimiterRedis =>
      new RateLimiterRedis({ storeClient: redis, keyPrefix: keys.rateLimit(name), points, duration, useRedisPackage: false });
    this.limiters = {
      register: make('register', cfg.registerPerMinute, 60),
      check: make('check', cfg.checkPerMinute, 60),
      // about one check a second per PIN with a small burst (RFC 8628's slow_down)
      checkPin: make('checkpin', cfg.checkPinBurst, Math.max(1, Math.round(cfg.checkPinBurst / cfg.checkPinPerSecond))),
      unknownPin: make('unknownpin', cfg.unknownPinPer10Minutes, 600),
      send: make('send', cfg.sendPerMinute, 60),
      reply: make('reply', cfg.replyPerMinute, 60),
    };
  }

  /** Spends one point of `name` for `key`, or throws RATE_LIMITED. */
  async consume(name: LimitName, key: string): Promise<void> {
    await consumeOrThrow(this.limiters[name], key);
  }

  /** Seconds to wait when spending would be refused, else null; spends nothing. */
  private async exhausted(name: LimitName, key: string): Promise<number | null> {
    const res = await this.limiters[name].get(key);
    if (res && res.remainingPoints <= 0) return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    return null;
  }

  /**
   * Runs an attempt that could confirm a guessed PIN, under the IP's budget of wrong guesses
   * (`unknownPin`): refused with RATE_LIMITED once the budget is spent, even when the guess would
   * be right; an attempt failing with `wrongGuess` spends a point. check-login (PIN_NOT_FOUND)
   * and register-pin (PIN_CONFLICT: "this PIN is taken") are both such oracles.
   */
  async guess<T>(ip: string, wrongGuess: ErrorCode, attempt: () => Promise<T>): Promise<T> {
    const blocked = await this.exhausted('unknownPin', ip);
    if (blocked !== null) throw new AppError('RATE_LIMITED', 'Too many wrong guesses from this address', { retryAfter: blocked });
    try {
      return await attempt();
    } catch (err) {
      if (err instanceof AppError && err.code === wrongGuess) await this.tryConsume('unknownPin', ip);
      throw err;
    }
  }

  /** Spends one point, reporting instead of throwing (worker side: chat replies). */
  async tryConsume(name: LimitName, key: string): Promise<boolean> {
    try {
      await this.limiters[name].consume(key);
      return true;
    } catch (err) {
      if (err instanceof RateLimiterRes) return false;
      throw err;
    }
  }

  /** A per-connection budget for socket events, in memory (a connection lives on one node). */
  socketBudget(): RateLimiterMemory {
    return new RateLimiterMemory({ points: this.cfg.socketEventsPerSecond, duration: 1 });
  }
}

async function consumeOrThrow(limiter: RateLimiterAbstract, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (err) {
    if (err instanceof RateLimiterRes) {
      throw new AppError('RATE_LIMITED', undefined, { retryAfter: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) });
    }
    throw err;
  }
}
