import { AppError } from '../errors.js';
import { newShortId } from '../ids.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { type Actor, actorText } from './actor.js';
import type { AuditEvent } from './audit.js';
import { findKeysAbout, type Holding, type Identifier, type KeysAbout, type Person, type Subject } from './holdings.js';

/**
 * Erasing a person (docs/accounts.md, "Erase"; GDPR art. 17, LGPD art. 18 VI, DPDP Act s. 12):
 * every holding (holdings.ts) in turn, so that no session or login path is ever left to a
 * half-erased account: sessions and OpenID logins end first, identifier links go before the
 * user record (a message arriving meanwhile makes a fresh account), the user record last.
 *
 * Resumable: the erase first writes its plan (`erasePlan(userId)`, the user's hash tag: the
 * receipt id, the actor, the person's identifiers) and then each holding's count as it finishes;
 * a retry after a fault (a crash, a lost connection, a holding that threw) reads the plan, skips
 * what is done and runs the rest. Every holding is idempotent, so a holding cut off halfway is
 * simply run again. The plan is deleted last, once the receipt is written. `resume()` finishes
 * every erase begun and not finished (their user ids in `erasePending`).
 *
 * The receipt (`erasure:<id>`, ERASURE_RECEIPT_DAYS) keeps no personal data: its random id, when,
 * who asked (an admin's or key's id; `user` when the person asked themselves) and how many keys
 * each holding removed. The audit event `account.erased` names the receipt, not the person.
 */

export interface EraseMeta {
  requestId?: string;
  ipGroup?: string;
  client?: string;
}

export interface ErasureReceipt {
  /** the receipt's id (`er_` + 128 random bits): what the operator notes against the request */
  id: string;
  /** ISO 8601 */
  erasedAt: string;
  /** who asked: `admin:<id>`, `key:<id>`, or `user` (the person themselves, no id), `system` */
  actor: string;
  /** keys (or records) removed, by holding */
  removed: Record<string, number>;
}

/** What the erase records in the audit trail (AuditTrail.record; handed in so a test can fail it). */
export interface ErasureAudit {
  record(e: AuditEvent): Promise<string>;
}

/** The receipt's actor: never the erased person's own id. */
export function receiptActor(actor: Actor, userId: string): string {
  if (actor.kind === 'user') return 'user';
  if (actor.kind === 'admin' && actor.userId === userId) return 'user';
  return actorText(actor);
}

export const DEFAULT_RECEIPT_DAYS = 365;

/** How often the worker role finishes erases left unfinished, and how old one must be (not one running now). */
export const RESUME_EVERY_MS = 5 * 60_000;
export const RESUME_AFTER_MS = 2 * 60_000;

/** The person as the user record names them: the phone and every `id:<kind>` field. */
export async function personOf(redis: RedisClient, keys: Keys, userId: string): Promise<Person | null> {
  const h = await redis.hgetall(keys.user(userId));
  if (!h.id) return null;
  const identifiers: Identifier[] = Object.entries(h)
    .filter(([f]) => f.startsWith('id:'))
    .map(([f, value]) => ({ kind: f.slice(3), value }));
  const phone = h.phone ? h.phone : null;
  if (phone) identifiers.push({ kind: 'phone', value: phone });
  return { userId, phone, identifiers };
}

/** A run's subject: the walk of the keyspace made at most once, when a holding first asks. */
export function subjectOf(redis: RedisClient, keys: Keys, person: Person): Subject {
  let walk: Promise<KeysAbout> | undefined;
  return {
    person,
    keysAbout: () => {
      walk ??= findKeysAbout(redis, keys, person);
      return walk;
    },
  };
}

export class Eraser {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly holdings: readonly Holding[],
    private readonly audit: ErasureAudit,
    private readonly receiptDays = DEFAULT_RECEIPT_DAYS,
  ) {}

  /**
   * Erases the user (or finishes their erase begun before). NOT_FOUND when there is neither a
   * user of that id nor an erase of theirs to finish.
   */
  async erase(userId: string, actor: Actor, meta: EraseMeta = {}): Promise<ErasureReceipt> {
    const planKey = this.keys.erasePlan(userId);
    let plan = await this.redis.hgetall(planKey);
    if (!plan.receipt) {
      const person = await personOf(this.redis, this.keys, userId);
      if (person === null) throw new AppError('NOT_FOUND', 'No such user');
      // the pending index first: a plan is never without it
      await this.redis.zadd(this.keys.erasePending(), 'NX', Date.now(), userId);
      // two erases at once share one plan: the first receipt id written wins
      await this.redis.hsetnx(planKey, 'receipt', `er_${newShortId()}`);
      await this.redis.hsetnx(planKey, 'person', JSON.stringify(person));
      await this.redis.hsetnx(planKey, 'actor', receiptActor(actor, userId));
      await this.redis.hsetnx(planKey, 'startedAt', Date.now());
      plan = await this.redis.hgetall(planKey);
    }
    const person = JSON.parse(plan.person ?? 'null') as Person | null;
    if (!plan.receipt || person === null) throw new AppError('INTERNAL_ERROR', 'Erase plan unreadable');
    const subject = subjectOf(this.redis, this.keys, person);
    const removed: Record<string, number> = {};
    for (const h of this.holdings) {
      const done = plan[`done:${h.name}`];
      if (done !== undefined) {
        removed[h.name] = Number(done);
        continue;
      }
      const n = await h.erase(subject);
      removed[h.name] = n;
      await this.redis.hset(planKey, `done:${h.name}`, n);
    }
    await this.redis.hsetnx(planKey, 'erasedAt', Date.now());
    const erasedAt = Number(await this.redis.hget(planKey, 'erasedAt'));
    const receipt: ErasureReceipt = { id: plan.receipt, erasedAt: new Date(erasedAt).toISOString(), actor: plan.actor ?? 'system', removed };
    await this.redis.set(this.keys.erasure(receipt.id), JSON.stringify(receipt), 'EX', this.receiptDays * 86400);
    if (plan.audited === undefined) {
      // after the person's own events are forgotten (holding `events`): no user id in it
      const self = receipt.actor === 'user';
      await this.audit.record({
        type: 'account.erased',
        ...(self ? {} : { actor }),
        ...meta,
        detail: { receipt: receipt.id, by: receipt.actor, removed: Object.values(removed).reduce((a, b) => a + b, 0) },
      });
      await this.redis.hset(planKey, 'audited', 1);
    }
    await this.redis.del(planKey);
    await this.redis.zrem(this.keys.erasePending(), userId);
    return receipt;
  }

  /** A receipt by its id (null once expired or unknown). */
  async receipt(id: string): Promise<ErasureReceipt | null> {
    const raw = await this.redis.get(this.keys.erasure(id));
    return raw ? (JSON.parse(raw) as ErasureReceipt) : null;
  }

  /**
   * Finishes the erases begun at least `olderThanMs` ago and not finished (a process that died
   * mid-way, a person whose own DELETE /account failed after their session had ended: they can't
   * retry it); their receipts. The worker role runs it every few minutes (RESUME_EVERY_MS).
   */
  async resume(actor: Actor, olderThanMs = 0): Promise<ErasureReceipt[]> {
    const pending = await this.redis.zrangebyscore(this.keys.erasePending(), '-inf', Date.now() - olderThanMs, 'LIMIT', 0, 100);
    const out: ErasureReceipt[] = [];
    for (const userId of pending) {
      const exists = await this.redis.exists(this.keys.erasePlan(userId));
      if (exists === 0) {
        await this.redis.zrem(this.keys.erasePending(), userId);
        continue;
      }
      out.push(await this.erase(userId, actor));
    }
    return out;
  }
}
