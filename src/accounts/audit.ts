import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
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

export class AuditTrail {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly retention: { days: number; maxEvents: number },
  ) {}

  /** Appends one event. A failure is the caller's to log: the audited action has already happened. */
  async record(e: AuditEvent): Promise<string> {
    const minId = Date.now() - this.retention.days * 86_400_000;
    const fields = [
      'type',
      e.type,
      'actor',
      actorText(e.actor ?? SYSTEM),
      ...(e.userId !== undefined ? ['userId', e.userId] : []),
      ...(e.requestId !== undefined ? ['requestId', e.requestId] : []),
      ...(e.ipGroup !== undefined ? ['ipGroup', e.ipGroup] : []),
      ...(e.client !== undefined ? ['client', e.client] : []),
      ...(e.detail !== undefined ? ['detail', JSON.stringify(e.detail)] : []),
    ];
    const id = await this.redis.xadd(this.keys.audit(), 'MAXLEN', '~', this.retention.maxEvents, '*', ...fields);
    // time-bound retention: entries older than the window go (approximately, by whole nodes)
    await this.redis.xtrim(this.keys.audit(), 'MINID', '~', minId);
    return id ?? '';
  }

  /** Events newest first, filtered; scans at most a bounded number of entries per page. */
  async list(f: AuditFilter): Promise<AuditPage> {
    const limit = Math.min(200, Math.max(1, f.limit ?? 50));
    const types = f.types !== undefined && f.types.length > 0 ? new Set<string>(f.types) : undefined;
    let end = f.cursor !== undefined ? `(${f.cursor}` : f.until !== undefined ? String(f.until) : '+';
    const start = f.since !== undefined ? String(f.since) : '-';
    const events: AuditRecord[] = [];
    const batch = 500;
    for (let scanned = 0; scanned < 20 * batch; scanned += batch) {
      const rows = await this.redis.xrevrange(this.keys.audit(), end, start, 'COUNT', batch);
      for (const [id, kv] of rows) {
        const r = toRecord(id, kv);
        if (f.userId !== undefined && r.userId !== f.userId) continue;
        if (types !== undefined && !types.has(r.type)) continue;
        events.push(r);
        if (events.length === limit) return { events, next: id };
      }
      if (rows.length < batch) return { events, next: null };
      end = `(${rows[rows.length - 1]![0]}`;
    }
    return { events, next: end.slice(1) };
  }
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
    at: new Date(Number(id.split('-')[0])).toISOString(),
    type: (m.get('type') ?? 'login.failed') as AuditType,
    userId: m.get('userId') ?? null,
    actor: m.get('actor') ?? 'system',
    requestId: m.get('requestId') ?? null,
    ipGroup: m.get('ipGroup') ?? null,
    client: m.get('client') ?? null,
    detail,
  };
}
