import type { Logger } from '../observability/logger.js';
import type { BudgetName } from './limits.js';

/**
 * What an operator needs to see an attack while it happens: every wrong PIN guess, every
 * registration collision (a PIN or emoji string another registration holds: honest clients
 * practically never collide, so each one is most likely a probe) and every refusal by a login
 * budget, as a warn-level log line carrying the client's IP group, and as a counter with
 * bounded labels (never an IP). Wrong guesses and collisions are bounded by the budgets, so they
 * are logged one by one; refusals are not (a client may keep hammering), so their log lines are
 * throttled per IP group and budget, each line saying how many were left out before it.
 */
export type ProbeVia = 'http' | 'socket';
export type GuessAction = 'check' | 'cancel';
export type CollisionKind = 'pin' | 'emoji';
/** a socket handshake from a foreign origin, or over the IP group's connection cap */
export type SocketRefusal = 'origin' | 'cap';

/** Where the counters go (the web role's metrics). */
export interface ProbeSink {
  wrongGuess(action: GuessAction): void;
  collision(kind: CollisionKind): void;
  rateLimited(limit: BudgetName): void;
  socketRefused(reason: SocketRefusal): void;
}

/** At most one refusal line per IP group and budget this often, per process. */
const REFUSAL_LOG_EVERY_MS = 10_000;
/** Bounds the memory of the throttle (the keys come from strangers). */
const THROTTLE_MAX_KEYS = 10_000;

export class Probes {
  private sink: ProbeSink | undefined;
  private readonly lastRefusalLog = new Map<string, { at: number; skipped: number }>();

  constructor(private readonly log: Logger) {}

  attach(sink: ProbeSink): void {
    this.sink = sink;
  }

  wrongGuess(ipGroup: string, via: ProbeVia, action: GuessAction): void {
    this.log.warn('wrong PIN guess', { ipGroup, via, action });
    this.sink?.wrongGuess(action);
  }

  collision(ipGroup: string, via: ProbeVia, kind: CollisionKind): void {
    const what = kind === 'pin' ? 'PIN held by another registration: answered with a decoy' : 'emoji string held by another registration: now contested';
    this.log.warn(`registration collision: ${what}`, { ipGroup, via, kind });
    this.sink?.collision(kind);
  }

  rateLimited(ipGroup: string, via: ProbeVia, limit: BudgetName, retryAfter: number): void {
    this.sink?.rateLimited(limit);
    this.refusal(`${limit} ${ipGroup}`, 'rate limited', { ipGroup, via, limit, retryAfter });
  }

  socketRefused(ipGroup: string, reason: SocketRefusal): void {
    this.sink?.socketRefused(reason);
    const line = reason === 'origin' ? 'socket handshake refused: foreign origin' : 'socket handshake refused: too many connections from this network';
    this.refusal(`socket-${reason} ${ipGroup}`, line, { ipGroup, via: 'socket', reason });
  }

  /** A refusal's warn line, at most one per key every REFUSAL_LOG_EVERY_MS. */
  private refusal(key: string, line: string, fields: Record<string, unknown>): void {
    const now = Date.now();
    const seen = this.lastRefusalLog.get(key);
    if (seen && now - seen.at < REFUSAL_LOG_EVERY_MS) {
      seen.skipped += 1;
      return;
    }
    if (this.lastRefusalLog.size >= THROTTLE_MAX_KEYS) this.lastRefusalLog.clear();
    this.lastRefusalLog.set(key, { at: now, skipped: 0 });
    this.log.warn(line, { ...fields, ...(seen?.skipped ? { notLogged: seen.skipped } : {}) });
  }
}
