import { decodeOrigin, encodeOrigin, type Origin } from '../registrations/origin.js';
import type { SessionView } from '../auth/sessions.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';

/**
 * A person's OpenID logins, read and ended without the provider (the worker has none): the
 * adapter (adapter.ts) indexes every record that names an account (provider sessions, grants,
 * codes, access and refresh tokens) in `oidcAccount(userId)`, so a sign-out finds them all.
 * One login is one grant (one app, one browser's consent); its tokens and the provider sessions
 * holding it end with it. Ending all of them also writes the account's sign-out time, which the
 * adapter holds against any grant or provider session from before it (a request that read one
 * just before the sign-out and saves it just after cannot bring it back).
 */

/** Ids in GET /sessions: an OpenID login's is this prefix and its grant id; an app session's id never holds a dot. */
export const OIDC_LOGIN_PREFIX = 'oidc.';

/** An OpenID login as its owner sees it beside the app's sessions. */
export interface OidcLoginView extends Omit<SessionView, 'current'> {
  kind: 'oidc';
  client: { id: string; name: string };
  /** the token making the request is the app's, never an OpenID login */
  current: false;
}

interface StoredGrant {
  accountId?: string;
  clientId?: string;
  iat?: number;
  exp?: number;
}

interface StoredSession {
  uid?: string;
  authorizations?: Record<string, { grantId?: string } | undefined>;
}

/** Last use and browser of a grant, as fields of the account's `oidcLogins` hash. */
const usedField = (grantId: string): string => `u:${grantId}`;
const originField = (grantId: string): string => `o:${grantId}`;

const parse = <T>(raw: string | null): T | undefined => {
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
};

export class OidcLogins {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    /** the longest life of a grant or provider session (s): how long a sign-out must be remembered */
    private readonly lifetimeSeconds: number,
    private readonly clientName: (clientId: string) => string | undefined = () => undefined,
  ) {}

  /** When the account last signed out everywhere (ms since the epoch), 0 if never (remembered). */
  async signedOutAt(userId: string): Promise<number> {
    return Number(await this.redis.get(this.keys.oidcSignedOut(userId))) || 0;
  }

  /** The browser a login came from, shown in the list (the interaction knows it; the grant does not). */
  async noteBrowser(userId: string, grantId: string, origin: Origin): Promise<void> {
    const k = this.keys.oidcLogins(userId);
    await this.redis.multi().hset(k, originField(grantId), encodeOrigin(origin)).expire(k, this.lifetimeSeconds).exec();
  }

  /**
   * The account's live OpenID logins, oldest first: the grants the `oidcLogins` hash names (each
   * grant notes its first code there), not the whole index (which holds every token issued).
   * Fields of grants that are gone are dropped.
   */
  async list(userId: string): Promise<OidcLoginView[]> {
    const loginsKey = this.keys.oidcLogins(userId);
    const [fields, signedOut] = await Promise.all([this.redis.hgetall(loginsKey), this.signedOutAt(userId)]);
    const grantIds = [...new Set(Object.keys(fields).map((f) => f.slice(2)))];
    const grants = await Promise.all(grantIds.map((id) => this.redis.get(this.keys.oidc('Grant', id))));
    const out: OidcLoginView[] = [];
    const gone: string[] = [];
    grantIds.forEach((grantId, i) => {
      const g = parse<StoredGrant>(grants[i] ?? null);
      if (!g || g.accountId !== userId || !g.clientId || ((g.iat ?? 0) + 1) * 1000 <= signedOut) {
        if (!g) gone.push(usedField(grantId), originField(grantId));
        return;
      }
      const created = (g.iat ?? 0) * 1000;
      const origin = decodeOrigin(fields[originField(grantId)]);
      out.push({
        id: OIDC_LOGIN_PREFIX + grantId,
        kind: 'oidc',
        client: { id: g.clientId, name: this.clientName(g.clientId) ?? g.clientId },
        createdAt: new Date(created).toISOString(),
        lastUsedAt: new Date(Math.max(created, Number(fields[usedField(grantId)]) || 0)).toISOString(),
        expiresAt: new Date((g.exp ?? 0) * 1000).toISOString(),
        device: origin.device,
        ip: origin.ip,
        current: false,
      });
    });
    if (gone.length > 0) await this.redis.hdel(loginsKey, ...gone);
    return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /**
   * Ends one login (`grantId`, without the prefix): the grant, its codes and tokens, and the
   * provider sessions holding it (else the browser that holds one would get the app a new grant
   * without the chat). False when the account has no such grant.
   */
  async end(userId: string, grantId: string): Promise<boolean> {
    const grantKey = this.keys.oidc('Grant', grantId);
    const grant = parse<StoredGrant>(await this.redis.get(grantKey));
    if (!grant || grant.accountId !== userId) return false;
    const sessionPrefix = this.keys.oidc('Session', '');
    const [tokens, members] = await Promise.all([
      this.redis.lrange(this.keys.oidcGrantTokens(grantId), 0, -1),
      this.redis.zrange(this.keys.oidcAccount(userId), '0', '-1'),
    ]);
    const sessionKeys = members.filter((m) => m.startsWith(sessionPrefix));
    const sessions = await Promise.all(sessionKeys.map((k) => this.redis.get(k)));
    const doomed = [grantKey, this.keys.oidcGrantTokens(grantId), ...tokens];
    sessionKeys.forEach((k, i) => {
      const s = parse<StoredSession>(sessions[i] ?? null);
      if (!s || !Object.values(s.authorizations ?? {}).some((a) => a?.grantId === grantId)) return;
      doomed.push(k);
      if (s.uid) doomed.push(this.keys.oidcUid(s.uid));
    });
    await this.remove(doomed);
    await Promise.all([
      this.redis.zrem(this.keys.oidcAccount(userId), ...doomed),
      this.redis.hdel(this.keys.oidcLogins(userId), usedField(grantId), originField(grantId)),
    ]);
    return true;
  }

  /**
   * Sign out everywhere (STOP, DELETE /sessions): every grant, code, token and provider session
   * of the account. The sign-out time is written first, so whatever is read after it is dead.
   * Returns how many logins (grants) were live.
   */
  async endAll(userId: string): Promise<number> {
    const now = Date.now();
    await this.redis.set(this.keys.oidcSignedOut(userId), now, 'EX', this.lifetimeSeconds);
    const accountKey = this.keys.oidcAccount(userId);
    const members = await this.redis.zrange(accountKey, '0', '-1');
    if (members.length === 0) return 0;
    const grantPrefix = this.keys.oidc('Grant', '');
    const grantKeys = members.filter((m) => m.startsWith(grantPrefix));
    const grantLists = grantKeys.map((k) => this.keys.oidcGrantTokens(k.slice(grantPrefix.length)));
    const live = await this.remove(grantKeys);
    await this.remove([...members.filter((m) => !m.startsWith(grantPrefix)), ...grantLists, accountKey, this.keys.oidcLogins(userId)]);
    return live;
  }

  /** Deletes keys one by one (they live in different slots on a cluster); how many existed. */
  private async remove(keys: string[]): Promise<number> {
    const done = await Promise.all([...new Set(keys)].map((k) => this.redis.unlink(k)));
    return done.reduce((n, d) => n + d, 0);
  }
}
