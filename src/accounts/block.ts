import { AppError } from '../errors.js';
import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';
import { type Actor, actorText } from './actor.js';
import type { AuditEvent } from './audit.js';

/**
 * Blocking an account (docs/accounts.md, "Block"): the user hash holds `blockedAt` (ms),
 * `blockedBy` (the actor as text) and `blockReason` (when given), written by user-block.lua. The
 * login chain reads `blockedAt` once it has found the sender's account (lib/login-steps.lua,
 * `account`, and again where the session is opened), so a blocked person signs no one in by any
 * path: a code, a YES, the OpenID login (the same chat login), whatever the waiting client uses
 * (socket, HTTP polling). Blocking ends every app session and OpenID login of the account at
 * once; unblocking lets the next sign-in through and brings back nothing that was ended.
 */

/** The longest reason kept (characters). */
export const MAX_BLOCK_REASON = 200;

/** Ends every session and linked login of an account (auth/sessions.ts `Sessions.endAll`, with the OpenID logins). */
export interface SessionEnder {
  endAll(userId: string): Promise<number>;
}

/** Where the audit events go (accounts/audit.ts). */
export interface AuditSink {
  record(e: AuditEvent): Promise<string>;
}

/** The request an admin action came in (for the audit trail). */
export interface ActionMeta {
  requestId?: string;
  ipGroup?: string;
}

export interface BlockResult {
  /** ms since the epoch: this block's, or the first one's when the account was blocked already */
  blockedAt: number;
  /** sessions and OpenID logins ended now */
  sessionsEnded: number;
}

export class Blocks {
  constructor(
    private readonly scripts: Scripts,
    private readonly keys: Keys,
    private readonly sessions: SessionEnder,
    private readonly audit: AuditSink,
  ) {}

  /**
   * Blocks the account, then ends its sessions (in that order: a login between the two either
   * opened its session before the block, and is ended here, or finds the account blocked).
   * Blocking a blocked account keeps the first block and still ends whatever is open.
   */
  async block(userId: string, actor: Actor, reason: string | undefined, meta: ActionMeta = {}): Promise<BlockResult> {
    const text = (reason ?? '').trim();
    if ([...text].length > MAX_BLOCK_REASON) throw new AppError('VALIDATION_ERROR', `reason must be at most ${MAX_BLOCK_REASON} characters`);
    const out = await this.scripts.run('user-block', [this.keys.user(userId)], ['block', Date.now(), actorText(actor), text]);
    if (out.kind !== 'blocked') throw new AppError('NOT_FOUND', 'No such user');
    const sessionsEnded = await this.sessions.endAll(userId);
    if (out.fresh) {
      await this.audit.record({
        type: 'account.blocked',
        userId,
        actor,
        ...meta,
        detail: { sessionsEnded, ...(text !== '' ? { reason: text } : {}) },
      });
    }
    return { blockedAt: out.blockedAt, sessionsEnded };
  }

  /** Lifts the block; unblocking an account that is not blocked changes nothing (and records nothing). */
  async unblock(userId: string, actor: Actor, meta: ActionMeta = {}): Promise<void> {
    const out = await this.scripts.run('user-block', [this.keys.user(userId)], ['unblock']);
    if (out.kind === 'missing') throw new AppError('NOT_FOUND', 'No such user');
    if (out.kind === 'unblocked') await this.audit.record({ type: 'account.unblocked', userId, actor, ...meta });
  }
}
