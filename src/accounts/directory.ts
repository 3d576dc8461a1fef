import { Cluster, type Redis } from 'ioredis';
import { parseRoles } from '../auth/roles.js';
import { AppError } from '../errors.js';
import { canonicalPhone } from '../identity/phone.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';

/**
 * The directory of people (docs/accounts.md, "Finding people"): who there is, newest first, and
 * who a search names. A search is an exact user id, a phone in any format (canonicalised as the
 * gateways' numbers are, identity/phone.ts), a LID (digits, `@lid` optional) or a BSUID, each
 * looked up through the identifier links; anything else is a name prefix, case- and
 * accent-insensitive, over the name and the surname.
 *
 * Three keys on one slot (`{d}`, keys.ts): user ids scored by creation time, name entries
 * `<folded name>\0<user id>` in a lex sorted set, and each person's entries (so a rename or an
 * erase takes the old ones out). The worker indexes an account when a sign-in makes it
 * (queues/workers/inbound.ts; idempotent), and `backfill` indexes every account once (the
 * worker runs it at start until it has finished once; `directoryBackfilled`). An entry whose
 * record is gone is skipped and dropped when read.
 */

/** A person as a list shows them. */
export interface UserSummary {
  id: string;
  name: string;
  surname: string;
  phone: string | null;
  roles: string[];
  blocked: boolean;
  /** ISO 8601 */
  createdAt: string;
  /** the last sign-in (a session opened), ISO 8601; null when none since the directory began keeping it */
  lastLoginAt: string | null;
}

/** An identifier the record shows: the linked ones (`phone`, `lid`, `bsuid`, …) and the `username` (shown, never looked up). */
export interface IdentifierView {
  kind: string;
  value: string;
}

/** A person in full, as the user record has them (the admin route adds sessions and events). */
export interface UserRecordView extends UserSummary {
  identifiers: IdentifierView[];
  blockedAt: string | null;
  blockedBy: string | null;
  blockReason: string | null;
}

export interface DirectoryPage {
  users: UserSummary[];
  /** pass as `cursor` for the next page; null at the end */
  next: string | null;
}

export interface DirectoryQuery {
  q?: string;
  cursor?: string;
  /** 1..100, default 20 */
  limit?: number;
}

export const DIRECTORY_LIMIT = { default: 20, max: 100 } as const;
/** longest search text: a name prefix, a phone, a LID or a BSUID are all far shorter */
export const MAX_QUERY_LENGTH = 200;

/** The name text an entry holds: NFKD, marks dropped, lower case, spaces collapsed ("José  Dá" → "jose da"). */
export function foldName(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\p{M}\p{Cc}]+/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

/** A person's name entries: the full name, and the surname alone (found by either's prefix). */
export function nameEntries(userId: string, name: string, surname: string): string[] {
  const full = foldName(`${name} ${surname}`);
  const last = foldName(surname);
  const texts = [...new Set([full, last].filter((t) => t !== ''))];
  return texts.map((t) => `${t}\0${userId}`);
}

const USER_ID = /^[A-Za-z0-9_-]{8,64}$/;
const LID = /^(\d{5,25})(?:@(?:hosted\.)?lid)?$/;
const BSUID = /^[A-Za-z0-9._:-]{3,128}$/;

type Cursor = { k: 'c'; s: number; i: string } | { k: 'n'; m: string };

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor<K extends Cursor['k']>(text: string, kind: K): Extract<Cursor, { k: K }> {
  const bad = (): never => {
    throw new AppError('VALIDATION_ERROR', 'Malformed cursor', { details: [{ field: 'cursor', message: "must be a previous page's next" }] });
  };
  if (text.length > 600 || !/^[A-Za-z0-9_-]+$/.test(text)) return bad();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return bad();
  }
  const o = v as Record<string, unknown>;
  if (kind === 'c' && o.k === 'c' && typeof o.s === 'number' && Number.isFinite(o.s) && typeof o.i === 'string' && USER_ID.test(o.i)) {
    return { k: 'c', s: o.s, i: o.i } as Extract<Cursor, { k: K }>;
  }
  if (kind === 'n' && o.k === 'n' && typeof o.m === 'string' && o.m.includes('\0') && o.m.length <= 400) return { k: 'n', m: o.m } as Extract<Cursor, { k: K }>;
  return bad();
}

const iso = (ms: string | null | undefined): string | null => {
  const n = Number(ms);
  return ms && Number.isFinite(n) && n > 0 ? new Date(n).toISOString() : null;
};

/** The user hash's fields a summary reads (HMGET, in this order). */
const SUMMARY_FIELDS = ['id', 'name', 'surname', 'phone', 'roles', 'createdAt', 'lastLoginAt', 'blockedAt'] as const;

function summaryOf(fields: (string | null)[]): UserSummary | null {
  const [id, name, surname, phone, roles, createdAt, lastLoginAt, blockedAt] = fields;
  if (!id) return null;
  return {
    id,
    name: name ?? '',
    surname: surname ?? '',
    phone: phone ? phone : null,
    roles: parseRoles(roles, []),
    blocked: Boolean(blockedAt),
    createdAt: iso(createdAt) ?? new Date(0).toISOString(),
    lastLoginAt: iso(lastLoginAt),
  };
}

export class Directory {
  constructor(
    private readonly redis: RedisClient,
    private readonly scripts: Scripts,
    private readonly keys: Keys,
  ) {}

  private dirKeys(): string[] {
    return [this.keys.directoryCreated(), this.keys.directoryNames(), this.keys.directoryEntries()];
  }

  /**
   * Indexes one account as its record is now (creation time, name, surname); false when there
   * is no record. Idempotent: the backfill's, and a retried login's that cannot tell whether it made the account.
   */
  async index(userId: string): Promise<boolean> {
    const [id, name, surname, createdAt] = await this.redis.hmget(this.keys.user(userId), 'id', 'name', 'surname', 'createdAt');
    if (!id) return false;
    await this.put({ id, name: name ?? '', surname: surname ?? '', createdAt: Number(createdAt) || 0 });
    return true;
  }

  /** Indexes an account whose record the caller has just read (a login that made it: no read of its own). */
  async put(a: { id: string; name: string; surname: string; createdAt: number }): Promise<void> {
    await this.scripts.run('directory-index', this.dirKeys(), [a.id, a.createdAt, ...nameEntries(a.id, a.name, a.surname)]);
  }

  /** Takes the person out of the directory (an erase, src/accounts/erase.ts); whether their record exists or not. Idempotent. */
  async unindex(userId: string): Promise<void> {
    await this.scripts.run('directory-index', this.dirKeys(), [userId, '']);
  }

  /** Whether the person is in the directory (an erase's check that nothing is left). */
  async holds(userId: string): Promise<boolean> {
    const [score, entries] = await Promise.all([
      this.redis.zscore(this.keys.directoryCreated(), userId),
      this.redis.hexists(this.keys.directoryEntries(), userId),
    ]);
    return score !== null || entries === 1;
  }

  /**
   * Indexes every account there is (a SCAN of the user records of this KEY_PREFIX, on each
   * primary of a cluster), then notes it is done: the worker calls it at start and it returns
   * at once when a run finished before (unless `force`). `stop()` returning true ends it early
   * (the worker closing); then it is not noted as done, and the next start runs it again.
   * Returns how many accounts it indexed.
   */
  async backfill(opts: { force?: boolean; stop?: () => boolean; batch?: number } = {}): Promise<number> {
    if (!opts.force && (await this.redis.exists(this.keys.directoryBackfilled())) === 1) return 0;
    const nodes: Redis[] = this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis];
    const userPrefix = this.keys.user('');
    // the user key is `<prefix>:user:{u<id>}`: the id is what stands between `{u` and `}`
    const head = userPrefix.slice(0, userPrefix.length - 1);
    const pattern = `${globEscape(head)}*}`;
    let indexed = 0;
    for (const node of nodes) {
      let cursor = '0';
      do {
        if (opts.stop?.()) return indexed;
        const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', opts.batch ?? 1000);
        cursor = next;
        for (const key of found) {
          if (opts.stop?.()) return indexed;
          if (!key.startsWith(head) || !key.endsWith('}')) continue;
          const userId = key.slice(head.length, -1);
          if (userId.includes('}') || userId.includes('{')) continue;
          if (await this.index(userId)) indexed++;
        }
      } while (cursor !== '0');
    }
    await this.redis.set(this.keys.directoryBackfilled(), String(Date.now()));
    return indexed;
  }

  /** Summaries of these users, in this order; ids without a record are left out (and dropped from the directory). */
  async summaries(ids: readonly string[]): Promise<UserSummary[]> {
    const rows = await Promise.all(ids.map((id) => this.redis.hmget(this.keys.user(id), ...SUMMARY_FIELDS)));
    const out: UserSummary[] = [];
    const gone: string[] = [];
    rows.forEach((row, i) => {
      const s = summaryOf(row);
      if (s) out.push(s);
      else gone.push(ids[i]!);
    });
    await Promise.all(gone.map((id) => this.unindex(id)));
    return out;
  }

  /** One person's record as the admin API shows it; null when there is no such user. */
  async record(userId: string): Promise<UserRecordView | null> {
    if (!USER_ID.test(userId)) return null;
    const all = await this.redis.hgetall(this.keys.user(userId));
    const summary = summaryOf(SUMMARY_FIELDS.map((f) => all[f] ?? null));
    if (!summary) return null;
    const identifiers: IdentifierView[] = [];
    if (all.phone) identifiers.push({ kind: 'phone', value: all.phone });
    for (const [field, value] of Object.entries(all).sort(([a], [b]) => a.localeCompare(b))) {
      if (field.startsWith('id:') && value) identifiers.push({ kind: field.slice(3), value });
    }
    if (all.username) identifiers.push({ kind: 'username', value: all.username });
    return {
      ...summary,
      identifiers,
      blockedAt: iso(all.blockedAt),
      blockedBy: all.blockedBy ? all.blockedBy : null,
      blockReason: all.blockReason ? all.blockReason : null,
    };
  }

  /** Whether a user record of this id exists. */
  async exists(userId: string): Promise<boolean> {
    return USER_ID.test(userId) && (await this.redis.exists(this.keys.user(userId))) === 1;
  }

  /** GET /users: a search (`q`) or everyone, newest first, a page at a time. */
  async find(query: DirectoryQuery): Promise<DirectoryPage> {
    const limit = query.limit ?? DIRECTORY_LIMIT.default;
    if (!(Number.isInteger(limit) && limit >= 1 && limit <= DIRECTORY_LIMIT.max)) {
      throw new AppError('VALIDATION_ERROR', `limit must be 1..${DIRECTORY_LIMIT.max}`, { details: [{ field: 'limit', message: 'must be 1..100' }] });
    }
    const q = (query.q ?? '').trim();
    if (q.length > MAX_QUERY_LENGTH || /\p{Cc}/u.test(q)) {
      throw new AppError('VALIDATION_ERROR', `q must be at most ${MAX_QUERY_LENGTH} printable characters`, {
        details: [{ field: 'q', message: `must be at most ${MAX_QUERY_LENGTH} printable characters` }],
      });
    }
    if (q === '') return this.newest(limit, query.cursor === undefined ? undefined : decodeCursor(query.cursor, 'c'));
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor, 'n');
    if (cursor === undefined) {
      const exact = await this.identified(q);
      if (exact.length > 0) return { users: exact, next: null };
    }
    const prefix = foldName(q);
    if (prefix === '') return { users: [], next: null };
    if (cursor !== undefined && !cursor.m.startsWith(prefix)) {
      throw new AppError('VALIDATION_ERROR', 'The cursor is of another search', { details: [{ field: 'cursor', message: 'is of another search' }] });
    }
    return this.byName(prefix, limit, cursor?.m);
  }

  /** The people an identifier names: the user id itself, a phone, a LID, a BSUID (newest first). */
  private async identified(q: string): Promise<UserSummary[]> {
    const lookups: Promise<string | null>[] = [];
    if (USER_ID.test(q)) lookups.push(this.redis.exists(this.keys.user(q)).then((n) => (n === 1 ? q : null)));
    const phone = canonicalPhone(q);
    if (phone !== null) lookups.push(this.redis.get(this.keys.identity('phone', phone)));
    const lid = LID.exec(q);
    if (lid) lookups.push(this.redis.get(this.keys.identity('lid', lid[1]!)));
    if (BSUID.test(q)) lookups.push(this.redis.get(this.keys.identity('bsuid', q)));
    const ids = [...new Set((await Promise.all(lookups)).filter((id): id is string => id !== null && id !== ''))];
    const users = await this.summaries(ids);
    return users.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
  }

  /** Everyone, newest first: by creation time, ties by id (descending), after the cursor's (time, id). */
  private async newest(limit: number, cursor: Extract<Cursor, { k: 'c' }> | undefined): Promise<DirectoryPage> {
    const key = this.keys.directoryCreated();
    const ids: string[] = [];
    const scores = new Map<string, number>();
    const take = (rows: string[]): void => {
      for (let i = 0; i + 1 < rows.length; i += 2) {
        ids.push(rows[i]!);
        scores.set(rows[i]!, Number(rows[i + 1]));
      }
    };
    let max = '+inf';
    if (cursor !== undefined) {
      // the cursor's own time: the ids after it in this order (lower ones) come first
      const ties = await this.redis.zrange(key, String(cursor.s), String(cursor.s), 'BYSCORE', 'REV', 'LIMIT', 0, 10_000, 'WITHSCORES');
      const rows: string[] = [];
      for (let i = 0; i + 1 < ties.length; i += 2) if (ties[i]! < cursor.i) rows.push(ties[i]!, ties[i + 1]!);
      take(rows.slice(0, 2 * (limit + 1)));
      max = `(${cursor.s}`;
    }
    if (ids.length <= limit) take(await this.redis.zrange(key, max, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, limit + 1 - ids.length, 'WITHSCORES'));
    const page = ids.slice(0, limit);
    const last = page[page.length - 1];
    const next = ids.length > limit && last !== undefined ? encodeCursor({ k: 'c', s: scores.get(last)!, i: last }) : null;
    return { users: await this.summaries(page), next };
  }

  /** Names starting with the folded prefix, in name order, after the cursor's entry. */
  private async byName(prefix: string, limit: number, after: string | undefined): Promise<DirectoryPage> {
    const key = this.keys.directoryNames();
    const min = after !== undefined ? Buffer.from(`(${after}`) : Buffer.from(`[${prefix}`);
    const max = Buffer.concat([Buffer.from(`[${prefix}`), Buffer.from([0xff])]);
    const rows = (await this.redis.zrangeBuffer(key, min, max, 'BYLEX', 'LIMIT', 0, limit + 1)).map((b) => b.toString('utf8'));
    const page = rows.slice(0, limit);
    const ids = [...new Set(page.map((m) => m.slice(m.lastIndexOf('\0') + 1)))];
    const last = page[page.length - 1];
    return { users: await this.summaries(ids), next: rows.length > limit && last !== undefined ? encodeCursor({ k: 'n', m: last }) : null };
  }
}

/** A text as a SCAN pattern that matches it literally. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
