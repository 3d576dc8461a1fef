import { AppError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { Actor } from './actor.js';
import type { ErasureAudit, EraseMeta } from './erase.js';
import { personOf, subjectOf } from './erase.js';
import type { Holding } from './holdings.js';

/**
 * A copy of everything held about a person as one JSON document (docs/accounts.md, "Export";
 * GDPR art. 15 and 20, LGPD art. 18 II and V, DPDP Act s. 11): each holding's part under its
 * name. It never holds a secret: no PIN hash, token, refresh jti or registration result.
 */
export const EXPORT_FORMAT = 'pin-auth/export/1';

/**
 * A person's own export walks the keyspace (holdings.ts): one a minute each (RATE_LIMITED with
 * Retry-After past it). An admin's or a key's exports are budgeted by the admin door.
 */
export const OWN_EXPORT_EVERY_MS = 60_000;

export interface PersonExport {
  format: typeof EXPORT_FORMAT;
  /** ISO 8601 */
  exportedAt: string;
  userId: string;
  /** each holding's part: account (the user record, roles), identifiers, sessions, openid, events, … */
  holdings: Record<string, unknown>;
}

export class Exporter {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly holdings: readonly Holding[],
    private readonly audit: ErasureAudit,
  ) {}

  /** NOT_FOUND for an unknown user (or one being erased). Audited as `account.exported`. */
  async export(userId: string, actor: Actor, meta: EraseMeta = {}): Promise<PersonExport> {
    const [person, erasing] = await Promise.all([personOf(this.redis, this.keys, userId), this.redis.exists(this.keys.erasePlan(userId))]);
    if (person === null || erasing === 1) throw new AppError('NOT_FOUND', 'No such user');
    if (actor.kind === 'user') {
      const wait = this.keys.exportWait(userId);
      if ((await this.redis.set(wait, '1', 'PX', OWN_EXPORT_EVERY_MS, 'NX')) === null) {
        const ms = await this.redis.pttl(wait);
        throw new AppError('RATE_LIMITED', 'One export a minute', { retryAfter: Math.max(1, Math.ceil(ms / 1000)) });
      }
    }
    const subject = subjectOf(this.redis, this.keys, person);
    const parts = await Promise.all(this.holdings.map(async (h) => [h.name, await h.export(subject)] as const));
    const doc: PersonExport = {
      format: EXPORT_FORMAT,
      exportedAt: new Date().toISOString(),
      userId,
      holdings: Object.fromEntries(parts.filter(([, v]) => v !== null)),
    };
    await this.audit.record({ type: 'account.exported', userId, actor, ...meta });
    return doc;
  }
}
