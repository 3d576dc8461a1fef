import { RateLimiterRes, type RateLimiterMemory } from 'rate-limiter-flexible';

/**
 * The per-connection event budget (RATE_SOCKET_EVENTS_PER_SECOND, in memory: a connection
 * lives on one node). Over budget, the client is told once per window (`pin-error`
 * RATE_LIMITED) and later events of that window are answered only through their
 * acknowledgement, so a flooding socket costs next to nothing and can't starve the others.
 * A connection that keeps sending far past its budget is cut.
 */
export type Verdict = { admit: true } | { admit: false; retryAfter: number; notify: boolean; cut: boolean };

/** Events in one window, as a multiple of the budget, past which the connection is cut. */
export const CUT_FACTOR = 10;

export class EventThrottle {
  constructor(private readonly budget: RateLimiterMemory) {}

  async check(connectionId: string): Promise<Verdict> {
    try {
      await this.budget.consume(connectionId);
      return { admit: true };
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      return {
        admit: false,
        retryAfter: Math.max(1, Math.ceil(err.msBeforeNext / 1000)),
        notify: err.consumedPoints === this.budget.points + 1,
        cut: err.consumedPoints > this.budget.points * CUT_FACTOR,
      };
    }
  }

  /** Forgets a closed connection at once instead of at the end of its window. */
  release(connectionId: string): void {
    void this.budget.delete(connectionId).catch(() => undefined);
  }
}
