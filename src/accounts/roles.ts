import { parseRoles } from '../auth/roles.js';
import { AppError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';
import type { Actor } from './actor.js';
import type { AuditTrail } from './audit.js';

/**
 * A person's roles (docs/accounts.md, "Roles"): names an app acts on, carried by the access
 * token's `roles` claim and the OpenID `roles` claim. Every account keeps `user`; at most
 * MAX_ROLES; each name ROLE_NAME. A change is a compare-and-set on the user record
 * (set-roles.lua), audited as `account.roles-changed` with the roles before and after. Tokens
 * issued from then on carry the new roles, and a session's next refresh re-reads them
 * (rotate-session.lua signs again when the stored roles differ from the token's).
 */
export const ROLE_NAME = /^[a-z][a-z0-9_.-]{0,31}$/;
export const MAX_ROLES = 16;
/** The role every account has; it can't be taken away. */
export const BASE_ROLE = 'user';
/** The role that opens the admin API and the console: only an admin signed in (not an API key) may give or take it. */
export const ADMIN_ROLE_NAME = 'admin';

/** Compare-and-set attempts before giving up (two admins editing one person in a loop). */
const ATTEMPTS = 5;

export type RoleChange = { op: 'set'; roles: readonly string[] } | { op: 'add'; role: string } | { op: 'remove'; role: string };

export interface RoleMeta {
  requestId?: string;
  ipGroup?: string;
  /** facts added to the audit record's detail (the command line's `via: cli`) */
  detail?: Record<string, string>;
}

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', `Invalid data: ${field} ${message}`, { details: [{ field, message }] });
}

/** Checks one role name. */
export function checkRoleName(role: unknown, field = 'role'): string {
  if (typeof role !== 'string' || !ROLE_NAME.test(role)) {
    throw invalid(field, 'must be 1 to 32 characters: a lower-case letter, then lower-case letters, digits, `_`, `.` or `-`');
  }
  return role;
}

/** The roles a change leaves, `user` first and kept, each once, in the order given; validated. */
export function applyRoles(before: readonly string[], change: RoleChange): string[] {
  let after: string[];
  if (change.op === 'set') {
    change.roles.forEach((r, i) => {
      checkRoleName(r, `roles.${i}`);
    });
    after = [BASE_ROLE, ...change.roles];
  } else if (change.op === 'add') {
    after = [...before, checkRoleName(change.role)];
  } else {
    checkRoleName(change.role);
    if (change.role === BASE_ROLE) throw invalid('role', 'is `user`, which every account keeps');
    after = before.filter((r) => r !== change.role);
  }
  const unique = [...new Set([BASE_ROLE, ...after])];
  if (unique.length > MAX_ROLES) throw invalid(change.op === 'set' ? 'roles' : 'role', `would make more than ${MAX_ROLES} roles`);
  return unique;
}

export class AccountRoles {
  constructor(
    private readonly redis: RedisClient,
    private readonly scripts: Scripts,
    private readonly keys: Keys,
    private readonly audit: Pick<AuditTrail, 'record'>,
    private readonly log?: Pick<Logger, 'warn'>,
  ) {}

  /**
   * Applies a change as `actor`; the roles after it. NOT_FOUND for an unknown user; FORBIDDEN
   * when the change gives or takes `admin` and the actor is neither an admin signed in nor the
   * command line (an API key can't make admins). Audited when the roles changed.
   */
  async change(userId: string, change: RoleChange, actor: Actor, meta: RoleMeta = {}): Promise<string[]> {
    const key = this.keys.user(userId);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const [id, raw] = await this.redis.hmget(key, 'id', 'roles');
      if (!id) throw new AppError('NOT_FOUND', 'No such user');
      const before = parseRoles(raw, []);
      const after = applyRoles(before, change);
      const adminBefore = before.includes(ADMIN_ROLE_NAME);
      // an admin signed in, or the command line (`system`: how the first admin is granted, docs/operations.md)
      if (adminBefore !== after.includes(ADMIN_ROLE_NAME) && actor.kind !== 'admin' && actor.kind !== 'system') {
        throw new AppError('FORBIDDEN', 'Only an admin signed in gives or takes the admin role');
      }
      const json = JSON.stringify(after);
      if (raw !== null && json === raw) return after;
      const out = await this.scripts.run('set-roles', [key], [raw ?? '', json]);
      if (out === 'nouser') throw new AppError('NOT_FOUND', 'No such user');
      if (out === 'changed') continue;
      if (json !== JSON.stringify(before)) {
        // the change is made: a trail that can't be written is logged, not the caller's failure
        await this.audit
          .record({
            type: 'account.roles-changed',
            userId,
            actor,
            ...(meta.requestId !== undefined ? { requestId: meta.requestId } : {}),
            ...(meta.ipGroup !== undefined ? { ipGroup: meta.ipGroup } : {}),
            detail: { ...meta.detail, before: before.join(','), after: after.join(',') },
          })
          .catch((err: unknown) => this.log?.warn('audit record not written', { type: 'account.roles-changed', error: String(err) }));
      }
      return after;
    }
    throw new AppError('NETWORK_ERROR', "The person's roles kept changing; try again");
  }
}
