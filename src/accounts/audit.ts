import { AppError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';
import { type Actor, actorText, SYSTEM } from './actor.js';

/**
 * The audit trail (docs/accounts.md, "Audit trail"): every security-relevant event as a record
 * in one Redis stream, kept for AUDIT_RETENTION_DAYS and at most AUDIT_MAX_EVENTS entries.
 */
export const AUDIT_TYPES = [
  'login.succeeded',
  'login.denied',
  'login.expired',
  'login.failed',
  'confirmation.asked',
  'confirmation.answered',
  'chat.stop',
  'session.ended',
  'refresh.reuse',
  'identity.number-changed',
  'identity.recycled-refused',
  'identity.linked',
  'account.blocked',
  'account.unblocked',
  'account.erased',
  'account.exported',
  'account.roles-changed',
  'key.created',
  'key.revoked',
  'admin.auth-failed',
] as const;
export type AuditType = (typeof AUDIT_TYPES)[number];

/** One event as a caller reports it. */
export interface AuditEvent {
  type: AuditType;
  /** the person it is about, when one is */
  userId?: string;
  /** who did it; the service itself when omitted */
  actor?: Actor;
  requestId?: string;
  /** the caller's IP group (security/ip-group.ts), never the whole address */
  ipGroup?: string;
  /** the app or OpenID client, or the chat channel */
  client?: string;
  /** a few facts of the event; never a PIN, an emoji string or a token */
  detail?: Record<string, string | number | boolean>;
}

/** One event as the trail keeps it: its stream id (a cursor) and its time. */
export interface AuditRecord {
  id: string;
  /** ISO 8601 */
  at: string;
  type: AuditType;
  userId: string | null;
  actor: string;
  requestId: string | null;
  ipGroup: string | null;
  client: string | null;
  detail: Record<string, string | number | boolean>;
}

export interface AuditFilter {
  /** events naming this person: about them, or done by them (read through their index) */
  userId?: string;
  types?: readonly AuditType[];
  /** ms since the epoch, inclusive */
  since?: number;
  /** ms since the epoch, inclusive */
  until?: number;
  /** the `next` of the previous page: events older than it */
  cursor?: string;
  /** 1..200, default 50 */
  limit?: number;
}

export interface AuditPage {
  events: AuditRecord[];
  /** pass as `cursor` for the next (older) page; null at the end */
  next: string | null;
}

/** Index members sort as their stream ids do: time and sequence zero-padded (all scores 0, lexical order). */
function member(id: string): string {
  const [ms = '0', seq = '0'] = id.split('-');
  return `${ms.padStart(16, '0')}-${seq.padStart(10, '0')}`;
}

function idOf(m: string): string {
  const [ms = '0', seq = '0'] = m.split('-');
  return `${ms.replace(/^0+(?=\d)/, '')}-${seq.replace(/^0+(?=\d)/, '')}`;
}

/** The people an event names: the one it is about and a person who did it. */
function peopleOf(userId: string | null | undefined, actor: string): string[] {
  const out = new Set<string>();
  if (userId) out.add(userId);
  const m = /^(?:admin|user):(.+)$/.exec(actor);
  if (m?.[1]) out.add(m[1]);
  return [...out];
}

/** What an erased person leaves as the actor of an event about someone else. */
export const ERASED_ACTOR = 'erased';

/** Where the trail's figures go (`/metrics`: observability/metrics.ts attaches one). */
export interface AuditSink {
  recorded(type: AuditType): void;
  failed(type: AuditType): void;
}

/** How live readers of the trail connect (follow): a blocking connection each, at most `max` at once in this process. */
export interface AuditLive {
  connect(): RedisClient;
  max: number;
}

/** Which events a live reader gets. */
export interface AuditFollowFilter {
  /** events naming this person (about them or done by them) */
  userId?: string;
  types?: readonly AuditType[];
}

export class AuditTrail {
  private sink: AuditSink | undefined;
  /** events that could not be recorded since the process started (also counted in the sink) */
  failures = 0;
  private readonly followers = new Set<AuditFollower>();

  constructor(
    private readonly redis: RedisClient,
    private readonly scripts: Scripts,
    private readonly keys: Keys,
    private readonly retention: { days: number; maxEvents: number },
    private readonly log?: Logger,
    private readonly live?: AuditLive,
  ) {}

  /**
   * A live reader of the trail: the events after `after` (a stream id; none: from now on), then
   * each one as it is recorded, on a blocking connection of its own. At most AuditLive.max at
   * once in this process: one more is RATE_LIMITED (429).
   */
  follow(after: string | undefined, filter: AuditFollowFilter = {}): AuditFollower {
    if (this.live === undefined) throw new AppError('INTERNAL_ERROR', 'This process serves no live event streams');
    if (this.followers.size >= this.live.max) {
      throw new AppError('RATE_LIMITED', `At most ${this.live.max} live event streams at once on this node`, { retryAfter: 5 });
    }
    const follower = new AuditFollower(this.redis, this.live.connect(), this.keys.audit(), after, filter, (f) => this.followers.delete(f));
    this.followers.add(follower);
    return follower;
  }

  /** Live readers open in this process now. */
  following(): number {
    return this.followers.size;
  }

  /** Ends every live reader (shutdown): their streams end as if the trail had nothing more. */
  stopFollowing(): void {
    for (const f of [...this.followers]) f.close();
  }

  attach(sink: AuditSink): void {
    this.sink = sink;
  }

  /**
   * Records events where they happen, never failing the action they record (that has happened):
   * a failure is a warning in the log and a count (`pinauth_audit_failures_total`). What every
   * caller uses; record() is the same but throws. Several events of one action are one call.
   */
  async note(...events: AuditEvent[]): Promise<void> {
    if (events.length === 0) return;
    try {
      await this.recordAll(events);
    } catch (err) {
      this.failures += events.length;
      for (const e of events) this.sink?.failed(e.type);
      this.log?.warn('audit event not recorded', { types: events.map((e) => e.type), error: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Appends one event. A failure is the caller's to log: the audited action has already happened. */
  async record(e: AuditEvent): Promise<string> {
    const [id = ''] = await this.recordAll([e]);
    return id;
  }

  private async recordAll(events: readonly AuditEvent[]): Promise<string[]> {
    const ids = await this.append(
      events.map((e) => {
        const actor = actorText(e.actor ?? SYSTEM);
        const fields = [
          'type',
          e.type,
          'actor',
          actor,
          ...(e.userId !== undefined ? ['userId', e.userId] : []),
          ...(e.requestId !== undefined ? ['requestId', e.requestId] : []),
          ...(e.ipGroup !== undefined ? ['ipGroup', e.ipGroup] : []),
          ...(e.client !== undefined ? ['client', e.client] : []),
          ...(e.detail !== undefined ? ['detail', JSON.stringify(e.detail)] : []),
        ];
        return { fields, people: peopleOf(e.userId, actor) };
      }),
    );
    for (const e of events) this.sink?.recorded(e.type);
    return ids;
  }

  /** The entries and each named person's index entry, in one script (audit-append.lua): one slot. */
  private async append(entries: readonly { fields: string[]; people: readonly string[] }[]): Promise<string[]> {
    const keys = [this.keys.audit()];
    const at = new Map<string, number>();
    const events = entries.map(({ fields, people }) => ({
      f: fields,
      p: people.map((person) => {
        let i = at.get(person);
        if (i === undefined) {
          keys.push(this.keys.auditOfUser(person));
          i = keys.length;
          at.set(person, i);
        }
        return i;
      }),
    }));
    return this.scripts.run('audit-append', keys, [this.retention.maxEvents, this.retention.days * 86_400_000, JSON.stringify(events)]);
  }

  /** The entries of these ids (one pipeline on the stream's slot); null for one trimmed away. */
  private async read(ids: readonly string[]): Promise<(AuditRecord | null)[]> {
    if (ids.length === 0) return [];
    const p = this.redis.pipeline();
    for (const id of ids) p.xrange(this.keys.audit(), id, id);
    const res = failOn(await p.exec()) as [string, string[]][][];
    return res.map((rows, i) => (rows.length > 0 ? toRecord(ids[i]!, rows[0]![1]) : null));
  }

  /** Events newest first, filtered; scans at most a bounded number of entries per page. */
  async list(f: AuditFilter): Promise<AuditPage> {
    const limit = Math.min(200, Math.max(1, f.limit ?? 50));
    const types = f.types !== undefined && f.types.length > 0 ? new Set<string>(f.types) : undefined;
    if (f.userId !== undefined) return this.listOfUser(f.userId, f, limit, types);
    let end = f.cursor !== undefined ? `(${f.cursor}` : f.until !== undefined ? String(f.until) : '+';
    const start = f.since !== undefined ? String(f.since) : '-';
    const events: AuditRecord[] = [];
    const batch = 500;
    for (let scanned = 0; scanned < 20 * batch; scanned += batch) {
      const rows = await this.redis.xrevrange(this.keys.audit(), end, start, 'COUNT', batch);
      for (const [id, kv] of rows) {
        const r = toRecord(id, kv);
        if (types !== undefined && !types.has(r.type)) continue;
        events.push(r);
        if (events.length === limit) return { events, next: id };
      }
      if (rows.length < batch) return { events, next: null };
      end = `(${rows[rows.length - 1]![0]}`;
    }
    return { events, next: end.slice(1) };
  }

  /** One person's page from their index: no stream scan; ids trimmed from the stream leave the index as they are met. */
  private async listOfUser(userId: string, f: AuditFilter, limit: number, types: Set<string> | undefined): Promise<AuditPage> {
    const idx = this.keys.auditOfUser(userId);
    let max = f.cursor !== undefined ? `(${member(f.cursor)}` : f.until !== undefined ? `[${member(`${f.until}-9999999999`)}` : '+';
    const min = f.since !== undefined ? `[${member(`${f.since}-0`)}` : '-';
    const events: AuditRecord[] = [];
    const batch = 200;
    for (let round = 0; round < 20; round++) {
      const members = await this.redis.zrevrangebylex(idx, max, min, 'LIMIT', 0, batch);
      const recs = await this.read(members.map(idOf));
      const gone = members.filter((_, i) => recs[i] === null);
      if (gone.length > 0) await this.redis.zrem(idx, ...gone);
      for (let i = 0; i < members.length; i++) {
        const r = recs[i];
        if (!r || (types !== undefined && !types.has(r.type))) continue;
        events.push(r);
        if (events.length === limit) return { events, next: r.id };
      }
      if (members.length < batch) return { events, next: null };
      max = `(${members[members.length - 1]}`;
    }
    return { events, next: idOf(max.slice(1)) };
  }

  /**
   * The latest events naming this person (about them, or done by them as an admin or by
   * themselves), newest first, read through their index (keys.auditOfUser).
   */
  async forUser(userId: string, limit = 20): Promise<AuditRecord[]> {
    return (await this.list({ userId, limit })).events;
  }

  /**
   * Erasure (docs/accounts.md): every event about the person goes; an event they did to someone
   * else stays with the actor `erased`, its IP group dropped and its time kept (`at`), under a new
   * stream id. Walks the person's index only, a batch at a time, removing from it what is done, so
   * a retry after a fault goes on where it stopped; then the index goes. Returns how many events
   * were removed or stripped.
   */
  async forget(userId: string): Promise<number> {
    const idx = this.keys.auditOfUser(userId);
    let n = 0;
    for (;;) {
      const members = await this.redis.zrange(idx, '0', '199');
      if (members.length === 0) break;
      const ids = members.map(idOf);
      const recs = await this.read(ids);
      const present: string[] = [];
      for (const r of recs) {
        if (!r) continue;
        present.push(r.id);
        if (r.userId !== userId) await this.strip(r);
      }
      if (present.length > 0) await this.redis.xdel(this.keys.audit(), ...present);
      n += present.length;
      await this.redis.zrem(idx, ...members);
    }
    await this.redis.del(idx);
    return n;
  }

  /** An event the erased person did to someone else (or to no one), again without them. */
  private async strip(r: AuditRecord): Promise<void> {
    const fields = [
      'type',
      r.type,
      'actor',
      ERASED_ACTOR,
      'at',
      r.at,
      ...(r.userId !== null ? ['userId', r.userId] : []),
      ...(r.requestId !== null ? ['requestId', r.requestId] : []),
      ...(r.client !== null ? ['client', r.client] : []),
      ...(Object.keys(r.detail).length > 0 ? ['detail', JSON.stringify(r.detail)] : []),
    ];
    await this.append([{ fields, people: r.userId !== null ? [r.userId] : [] }]);
    if (r.userId !== null) await this.redis.zrem(this.keys.auditOfUser(r.userId), member(r.id));
  }
}

/** One live reader (AuditTrail.follow): `records()` yields until close(). */
export class AuditFollower {
  private closed = false;
  private readonly types: Set<string> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly conn: RedisClient,
    private readonly stream: string,
    private after: string | undefined,
    private readonly filter: AuditFollowFilter,
    private readonly onClose: (f: AuditFollower) => void,
  ) {
    this.types = filter.types !== undefined && filter.types.length > 0 ? new Set<string>(filter.types) : undefined;
  }

  /** The stream id of the last event read (filtered out or not): where a reconnect resumes. */
  get position(): string | undefined {
    return this.after;
  }

  async *records(): AsyncGenerator<AuditRecord> {
    try {
      // "from now on" is the stream's last id now, so nothing recorded between two reads is lost
      if (this.after === undefined) {
        const last = await this.redis.xrevrange(this.stream, '+', '-', 'COUNT', 1);
        this.after = last[0]?.[0] ?? '0-0';
      }
      while (!this.closed) {
        const res = (await this.conn.xread('COUNT', 100, 'BLOCK', 5000, 'STREAMS', this.stream, this.after)) as [string, [string, string[]][]][] | null;
        for (const [, entries] of res ?? []) {
          for (const [id, kv] of entries) {
            this.after = id;
            const r = toRecord(id, kv);
            if (this.types !== undefined && !this.types.has(r.type)) continue;
            if (this.filter.userId !== undefined && !peopleOf(r.userId, r.actor).includes(this.filter.userId)) continue;
            yield r;
            if (this.closed) return;
          }
        }
      }
    } catch (err) {
      // close() disconnects a blocked read: that is the end, not a fault
      if (!this.closed) throw err;
    } finally {
      this.close();
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.conn.disconnect();
    this.onClose(this);
  }
}

/** A pipeline's results, or its first error thrown. */
function failOn(res: [Error | null, unknown][] | null): unknown[] {
  if (res === null) throw new Error('pipeline aborted');
  for (const [err] of res) if (err) throw err;
  return res.map(([, v]) => v);
}

function toRecord(id: string, kv: string[]): AuditRecord {
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < kv.length; i += 2) m.set(kv[i]!, kv[i + 1]!);
  let detail: Record<string, string | number | boolean> = {};
  try {
    detail = JSON.parse(m.get('detail') ?? '{}') as Record<string, string | number | boolean>;
  } catch {
    detail = {};
  }
  return {
    id,
    // a stripped copy (forget) keeps the time of the event it replaces
    at: m.get('at') ?? new Date(Number(id.split('-')[0])).toISOString(),
    type: (m.get('type') ?? 'login.failed') as AuditType,
    userId: m.get('userId') ?? null,
    actor: m.get('actor') ?? 'system',
    requestId: m.get('requestId') ?? null,
    ipGroup: m.get('ipGroup') ?? null,
    client: m.get('client') ?? null,
    detail,
  };
}
