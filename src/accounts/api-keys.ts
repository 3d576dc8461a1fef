import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { ADMIN_SCOPES, type Actor, type AdminScope, actorText } from './actor.js';

/**
 * API keys: how a machine calls the admin API (docs/accounts.md, "Who may do it"). A key is
 * `pak_<id>_<secret>`: `pak_` and the fixed shape let a secret scanner spot one in a log or a
 * repository (API_KEY_PATTERN); the id (16 hex digits, not secret) names the key in lists and in
 * the audit trail (`key:<id>`); the secret is 256 random bits, shown once when the key is made.
 *
 * Redis keeps the secret's SHA-256, never the secret. A slow password hash (bcrypt, scrypt,
 * argon2) exists to make guessing a low-entropy password costly; a 256-bit random secret cannot
 * be guessed however fast the hash is, and a slow hash on every API call would cost tens of
 * milliseconds of CPU per request and hand anyone with a stream of wrong keys a way to burn it.
 * The digests are compared with timingSafeEqual.
 */
export const API_KEY_PATTERN = /^pak_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const ID_PATTERN = /^[0-9a-f]{16}$/;

/** Live (unrevoked) keys at most: past it a key must be revoked before another is made. */
export const MAX_LIVE_KEYS = 100;
/** A key's name: 1..64 characters, no control characters. */
export const MAX_KEY_NAME = 64;
/** lastUsedAt is written at most this often per key (one write a minute, not one a request). */
const LAST_USED_EVERY_MS = 60_000;

export interface ApiKeyView {
  id: string;
  name: string;
  scopes: AdminScope[];
  /** who made it: `admin:<userId>` or `system` (the command line) */
  createdBy: string;
  /** ISO 8601 */
  createdAt: string;
  /** ISO 8601, to the minute; null when never used */
  lastUsedAt: string | null;
  /** ISO 8601; null while the key works */
  revokedAt: string | null;
}

/** A key's id as a route or the command line names it, or VALIDATION_ERROR. */
export function parseKeyId(raw: string): string {
  if (!ID_PATTERN.test(raw)) throw new AppError('VALIDATION_ERROR', 'A key id is 16 hexadecimal digits (the part after pak_)');
  return raw;
}

/** Does a bearer token look like an API key (rather than an access token)? */
export const isApiKeyText = (token: string): boolean => token.startsWith('pak_');

const digest = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();
const iso = (ms: string | null | undefined): string | null => (ms ? new Date(Number(ms)).toISOString() : null);

const FIELDS = ['id', 'name', 'scopes', 'createdBy', 'createdAt', 'lastUsedAt', 'revokedAt', 'hash'] as const;

function invalid(field: string, message: string): never {
  throw new AppError('VALIDATION_ERROR', `Invalid data: ${field} ${message}`, { details: [{ field, message }] });
}

/** A key's name and scopes as given (the route's body, the command line's flags), checked. */
export function checkKeyInput(input: { name?: unknown; scopes?: unknown }): { name: string; scopes: AdminScope[] } {
  const name = typeof input.name === 'string' ? input.name.trim() : undefined;
  if (name === undefined) invalid('name', 'is required');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (name.length < 1 || name.length > MAX_KEY_NAME || /[\u0000-\u001f\u007f]/.test(name)) {
    invalid('name', `must be 1 to ${MAX_KEY_NAME} characters without control characters`);
  }
  if (!Array.isArray(input.scopes) || input.scopes.length === 0) invalid('scopes', `must be a non-empty list of ${ADMIN_SCOPES.join(', ')}`);
  const scopes: AdminScope[] = [];
  for (const s of input.scopes as unknown[]) {
    if (typeof s !== 'string' || !(ADMIN_SCOPES as readonly string[]).includes(s)) invalid('scopes', `must each be one of ${ADMIN_SCOPES.join(', ')}`);
    if (scopes.includes(s as AdminScope)) invalid('scopes', `names ${s} twice`);
    scopes.push(s as AdminScope);
  }
  return { name, scopes };
}

export class ApiKeys {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    /** a revoked key's record is kept this long (the audit trail's retention), so `key:<id>` in old events still has a name */
    private readonly revokedKeepDays: number,
  ) {}

  /** Makes a key; the answer's `secret` (the whole `pak_…` text) is the only time it is seen. */
  async create(input: { name?: unknown; scopes?: unknown }, createdBy: Actor): Promise<{ key: ApiKeyView; secret: string }> {
    const { name, scopes } = checkKeyInput(input);
    const live = (await this.list()).filter((k) => k.revokedAt === null).length;
    if (live >= MAX_LIVE_KEYS) throw new AppError('VALIDATION_ERROR', `At most ${MAX_LIVE_KEYS} API keys can be live at once; revoke one first`);
    const id = randomBytes(8).toString('hex');
    const secretPart = randomBytes(32).toString('base64url');
    const now = Date.now();
    const record = { id, name, scopes: scopes.join(','), createdBy: actorText(createdBy), createdAt: String(now), hash: digest(secretPart).toString('hex') };
    // the record first: an index entry never points at nothing (a record without one is only unlisted)
    await this.redis.hset(this.keys.apiKey(id), record);
    await this.redis.zadd(this.keys.apiKeys(), now, id);
    return { key: view([id, name, record.scopes, record.createdBy, record.createdAt, null, null]), secret: `pak_${id}_${secretPart}` };
  }

  /** Every key, newest first, revoked ones included until their record expires. */
  async list(): Promise<ApiKeyView[]> {
    const ids = await this.redis.zrevrange(this.keys.apiKeys(), 0, -1);
    const rows = await Promise.all(ids.map((id) => this.redis.hmget(this.keys.apiKey(id), ...FIELDS)));
    const gone = ids.filter((_, i) => rows[i]![0] === null);
    if (gone.length > 0) await this.redis.zrem(this.keys.apiKeys(), ...gone);
    return rows.filter((r) => r[0] !== null).map(view);
  }

  /** One key, or NOT_FOUND. */
  async get(id: string): Promise<ApiKeyView> {
    const row = await this.redis.hmget(this.keys.apiKey(parseKeyId(id)), ...FIELDS);
    if (row[0] === null) throw new AppError('NOT_FOUND', 'No such API key');
    return view(row);
  }

  /**
   * Revokes a key: it opens nothing from now on, its digest is dropped, and its record expires
   * after the audit retention. Unknown: NOT_FOUND; already revoked: the same answer, `changed` false.
   */
  async revoke(id: string): Promise<{ key: ApiKeyView; changed: boolean }> {
    const key = await this.get(id);
    if (key.revokedAt !== null) return { key, changed: false };
    const k = this.keys.apiKey(key.id);
    const now = Date.now();
    await this.redis
      .multi()
      .hset(k, 'revokedAt', String(now))
      .hdel(k, 'hash')
      .pexpire(k, this.revokedKeepDays * 86_400_000)
      .exec();
    return { key: { ...key, revokedAt: new Date(now).toISOString() }, changed: true };
  }

  /**
   * The live key a presented `pak_…` text is, or null (malformed, unknown, revoked or a wrong
   * secret: the caller answers all alike). Notes the use, at most once a minute.
   */
  async verify(presented: string): Promise<ApiKeyView | null> {
    const m = API_KEY_PATTERN.exec(presented);
    if (!m) return null;
    const [, id, secretPart] = m as unknown as [string, string, string];
    const row = await this.redis.hmget(this.keys.apiKey(id), ...FIELDS);
    const stored = row[7];
    if (row[0] === null || row[6] !== null || stored === null || stored === undefined || stored.length !== 64) return null;
    if (!timingSafeEqual(digest(secretPart), Buffer.from(stored, 'hex'))) return null;
    const now = Date.now();
    if (now - Number(row[5] ?? 0) >= LAST_USED_EVERY_MS) {
      await this.redis.hset(this.keys.apiKey(id), 'lastUsedAt', String(now));
      row[5] = String(now);
    }
    return view(row);
  }
}

function view(row: (string | null)[]): ApiKeyView {
  const scopes = (row[2] ?? '').split(',').filter((s): s is AdminScope => (ADMIN_SCOPES as readonly string[]).includes(s));
  return {
    id: row[0] ?? '',
    name: row[1] ?? '',
    scopes,
    createdBy: row[3] ?? 'system',
    createdAt: iso(row[4]) ?? new Date(0).toISOString(),
    lastUsedAt: iso(row[5]),
    revokedAt: iso(row[6]),
  };
}
