import type { RedisClient } from '../../redis/connection.js';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import type { Logger } from '../../observability/logger.js';
import type { Keys } from '../../redis/keys.js';
import { ipGroup } from '../../security/ip-group.js';

/** The window in which wrong admin credentials are counted. */
const WINDOW_SECONDS = 15 * 60;

/**
 * Wrong credentials on the operator pages (dashboard basic auth, /metrics token), counted per
 * IP group in Redis (shared by every web node). Past the budget the group gets 429 with
 * Retry-After until the window ends, even with the right password, so guessing is slow
 * everywhere. Each failure is a warn line with the group; a success after failures is noted
 * and clears the count. Requests without any Authorization header (a browser's first visit,
 * before the login prompt) are not guesses and are not counted.
 */
export class AdminLoginThrottle {
  private readonly limiter: RateLimiterRedis;

  constructor(
    redis: RedisClient,
    keys: Keys,
    private readonly maxFailures: number,
    private readonly ipv6PrefixLength: number,
    private readonly log: Logger,
  ) {
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: keys.rateLimit('adminfail'),
      points: maxFailures,
      duration: WINDOW_SECONDS,
      useRedisPackage: false,
    });
  }

  /** The IP group a client address is counted under (IPv6 by the configured prefix). */
  group(ip: string): string {
    return ipGroup(ip, this.ipv6PrefixLength);
  }

  /** Failures so far in the window, and the seconds left when the budget is spent. */
  async state(ip: string): Promise<{ failures: number; retryAfter: number | null }> {
    const res = await this.limiter.get(this.group(ip));
    const failures = res?.consumedPoints ?? 0;
    const retryAfter = res && failures >= this.maxFailures ? Math.max(1, Math.ceil(res.msBeforeNext / 1000)) : null;
    return { failures, retryAfter };
  }

  async failed(ip: string, path: string): Promise<void> {
    const group = this.group(ip);
    const res = await this.limiter.penalty(group, 1);
    this.log.warn('admin login failed', { ipGroup: group, path, failures: res.consumedPoints, of: this.maxFailures });
  }

  async succeeded(ip: string, path: string, failuresBefore: number): Promise<void> {
    if (failuresBefore === 0) return;
    const group = this.group(ip);
    this.log.warn('admin login succeeded after failures', { ipGroup: group, path, failures: failuresBefore });
    await this.limiter.delete(group);
  }
}
