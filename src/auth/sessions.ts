import type { RedisClient } from '../redis/connection.js';
import { AppError } from '../errors.js';
import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';
import { newShortId } from '../ids.js';
import type { User } from '../registrations/login-result.js';
import { decodeOrigin } from '../registrations/origin.js';
import { parseRoles } from './roles.js';
import type { TokenClaims, TokenService } from './tokens.js';
import { accountOfSender, type Identity } from '../identity/identities.js';

/**
 * Sessions: each login opens one in Redis (`sess:<sid>` = user id, current refresh jti,
 * created, last used, origin). An access token is good while its session is open; refresh
 * rotates the jti; any older jti presented again is a spent token, and closes the session
 * (reuse detection), except within a short leeway after its rotation, when it gets the same new
 * pair again (a retried request). Each user's sessions are indexed (`usess:<userId>`), so the person can
 * list them and close one or all of them; closing a session refuses its tokens at once.
 */
/** A refresh's new pair as JSON text, `{"token":…,"refreshToken":…}`: the answer's tail as it is, and what a retry gets back. */
export type PairJson = string;

/** A session as its owner sees it (GET /sessions). */
export interface SessionView {
  id: string;
  /** ISO 8601 */
  createdAt: string;
  /** the last login or token refresh of the session (ISO 8601) */
  lastUsedAt: string;
  expiresAt: string;
  device: string;
  /** the signing-in request's address, host part masked */
  ip: string;
  /** the session of the token making this request */
  current: boolean;
}

/**
 * Open sessions kept per user; the login past it closes the oldest. Bounds the index (and a
 * phone's sessions) however often someone signs in within the refresh-token lifetime.
 */
export const MAX_SESSIONS_PER_USER = 100;

/** Signings of a refresh whose user's roles keep changing under it before it gives up. */
const ROLE_ATTEMPTS = 3;

/** Logins of the same person kept elsewhere (the OpenID provider's grants), which a sign-out everywhere ends too. */
export interface LinkedLogins {
  /** ends every one of the user's; returns how many were live */
  endAll(userId: string): Promise<number>;
}

/** Who ended a session, as the audit trail names them (accounts/actor.ts's Actor is one of these). */
export type SessionActor = { kind: 'admin' | 'user'; userId: string } | { kind: 'key'; keyId: string } | { kind: 'system' };

/** The request a session change came with: its id, the caller's IP group, the client (the chat channel, an OpenID client). */
export interface RequestMeta {
  requestId?: string;
  ipGroup?: string;
  client?: string;
  /** who did it when not the session's own person (an admin, a key) */
  actor?: SessionActor;
}

/**
 * How sessions ended: a logout, one ended from the list, all of them (sign out everywhere, STOP
 * in the chat), a refresh token used twice; `handoff`: an OpenID sign-in's chat login turned into
 * its grant (told to nobody: nothing ended for the person).
 */
export type SessionEndHow = 'logout' | 'one' | 'everywhere' | 'stop' | 'reuse' | 'handoff';

/**
 * Where session events are told (the audit trail: services.ts hands in accounts/audit.ts's,
 * which sits above this layer). Each call must not throw; the change it tells has happened.
 */
export interface SessionEvents {
  ended(e: { userId: string; how: SessionEndHow; count: number; sessionId?: string; meta?: RequestMeta }): void | Promise<void>;
  reused(e: { userId: string; sessionId: string; meta?: RequestMeta }): void | Promise<void>;
}

const iso = (ms: string): string => new Date(Number(ms) || 0).toISOString();

export class Sessions {
  constructor(
    private readonly redis: RedisClient,
    private readonly scripts: Scripts,
    private readonly keys: Keys,
    private readonly tokens: TokenService,
    /** a refresh retried this soon after its rotation gets the same new pair */
    private readonly reuseSeconds = 0,
    private readonly linked?: LinkedLogins,
    private readonly events?: SessionEvents,
  ) {}

  /** Verifies a bearer access token and that its session is still open. */
  async authenticate(bearer: string | undefined, opts: { allowExpired?: boolean } = {}): Promise<TokenClaims> {
    if (!bearer) throw new AppError('AUTHENTICATION_FAILED', 'Missing bearer token');
    const claims = this.tokens.verify(bearer, 'access', opts);
    const owner = await this.redis.hget(this.keys.session(claims.sub, claims.sid), 'userId');
    if (owner !== claims.sub) throw new AppError('AUTHENTICATION_FAILED', 'Session closed');
    return claims;
  }

  /**
   * GET /profile: the verified token's user, its session checked open in the same round trip
   * (both reads go out together; the user is only returned once the session's owner matched).
   */
  async profile(bearer: string | undefined): Promise<{ claims: TokenClaims; user: User }> {
    if (!bearer) throw new AppError('AUTHENTICATION_FAILED', 'Missing bearer token');
    const claims = this.tokens.verify(bearer, 'access');
    const [owner, fields] = await Promise.all([
      this.redis.hget(this.keys.session(claims.sub, claims.sid), 'userId'),
      this.redis.hmget(this.keys.user(claims.sub), ...USER_FIELDS),
    ]);
    if (owner !== claims.sub) throw new AppError('AUTHENTICATION_FAILED', 'Session closed');
    return { claims, user: userFrom(fields) };
  }

  /** `{refreshToken}` form: rotate the presented refresh token. */
  async refreshWithToken(access: TokenClaims, refreshToken: string, meta?: RequestMeta): Promise<PairJson> {
    const refresh = this.tokens.verify(refreshToken, 'refresh');
    if (refresh.sub !== access.sub || refresh.sid !== access.sid) {
      throw new AppError('AUTHENTICATION_FAILED', 'Tokens do not belong together');
    }
    return this.rotate(access, refresh.jti, meta);
  }

  /** `{id}` form: an unexpired access token whose subject is `id` rotates its session. */
  async refreshWithId(access: TokenClaims, id: string, meta?: RequestMeta): Promise<PairJson> {
    if (access.exp * 1000 <= Date.now()) throw new AppError('AUTHENTICATION_FAILED', 'Access token expired');
    if (access.sub !== id) throw new AppError('FORBIDDEN', 'The id does not match the token');
    return this.rotate(access, '*', meta);
  }

  /**
   * The pair is signed before the script runs: the script keeps it for the retry leeway, so a
   * retry of this very refresh (its answer lost to a timeout) gets the same pair, not "reuse".
   * It is signed with the roles of the presented access token, and the script rotates only if
   * those are still the user's stored roles (one round trip); if they changed, it answers with
   * the stored ones and the pair is signed again with them. The pair is handed on as the JSON
   * text the script keeps (a retry's kept pair is not parsed to be serialised again).
   */
  private async rotate(access: TokenClaims, presentedJti: string, meta?: RequestMeta): Promise<PairJson> {
    const { sub: userId, sid } = access;
    let rolesJson = JSON.stringify(access.roles ?? []);
    for (let attempt = 0; attempt < ROLE_ATTEMPTS; attempt++) {
      const issued = this.tokens.issuePair(userId, sid, parseRoles(rolesJson, []), newShortId(), { remember: true });
      const pair = JSON.stringify({ token: issued.token, refreshToken: issued.refreshToken });
      const out = await this.scripts.run(
        'rotate-session',
        [this.keys.session(userId, sid), this.keys.userSessions(userId), this.keys.rotation(userId, sid), this.keys.user(userId)],
        [sid, userId, presentedJti, issued.refreshJti, this.tokens.refreshTtl * 1000, pair, this.reuseSeconds * 1000, rolesJson],
      );
      if (out.kind === 'ok') return pair;
      // (a kept pair is always an object's JSON; anything else is answered as a closed session, never half an answer)
      if (out.kind === 'again' && out.pairJson.startsWith('{')) return out.pairJson;
      if (out.kind === 'reuse') {
        await this.events?.reused({ userId, sessionId: sid, meta });
        await this.events?.ended({ userId, how: 'reuse', count: 1, sessionId: sid, meta });
        throw new AppError('AUTHENTICATION_FAILED', 'Refresh token already used; session closed');
      }
      if (out.kind === 'nouser') throw new AppError('AUTHENTICATION_FAILED', 'User not found');
      if (out.kind !== 'roles') throw new AppError('AUTHENTICATION_FAILED', 'Session closed');
      rolesJson = out.rolesJson;
    }
    // the roles changed under every attempt: an operator rewriting them in a loop
    throw new AppError('NETWORK_ERROR', 'The user changed while the session was refreshed; try again');
  }

  async logout(access: TokenClaims, id: string, meta?: RequestMeta): Promise<void> {
    if (access.sub !== id) throw new AppError('FORBIDDEN', 'Cannot log out another user');
    await this.end(access.sub, access.sid, meta, 'logout');
  }

  /** The user's open sessions, oldest first. */
  async list(userId: string, currentSid: string): Promise<SessionView[]> {
    const rows = await this.scripts.run('list-sessions', [this.keys.userSessions(userId)], [this.keys.session(userId, ''), userId]);
    const out: SessionView[] = [];
    for (const row of rows) {
      const origin = decodeOrigin(row.origin);
      out.push({
        id: row.sessionId,
        createdAt: iso(row.createdAt),
        lastUsedAt: iso(row.lastUsedAt),
        expiresAt: iso(row.expiresAt),
        device: origin.device,
        ip: origin.ip,
        current: row.sessionId === currentSid,
      });
    }
    return out;
  }

  /** Closes one of the user's sessions; false when there is none of that id (or it is another user's). */
  async end(userId: string, sid: string, meta?: RequestMeta, how: SessionEndHow = 'one'): Promise<boolean> {
    const ended = (await this.scripts.run('end-sessions', [this.keys.userSessions(userId)], [this.keys.session(userId, ''), userId, sid])) > 0;
    if (ended && how !== 'handoff') await this.events?.ended({ userId, how, count: 1, sessionId: sid, meta });
    return ended;
  }

  /** Sign out everywhere: closes every session of the user at once, and their linked logins; returns how many. */
  async endAll(userId: string, meta?: RequestMeta, how: SessionEndHow = 'everywhere'): Promise<number> {
    const [sessions, linked] = await Promise.all([
      this.scripts.run('end-sessions', [this.keys.userSessions(userId)], [this.keys.session(userId, ''), userId, '*']),
      this.linked?.endAll(userId) ?? 0,
    ]);
    if (sessions + linked > 0) await this.events?.ended({ userId, how, count: sessions + linked, meta });
    return sessions + linked;
  }

  /**
   * STOP in the chat: every session of the sender's own account (identities.ts, accountOfSender:
   * never the previous owner's of a recycled number); 0 when it has none.
   */
  async endAllOfSender(ids: readonly Identity[], meta?: RequestMeta): Promise<{ userId: string | null; sessions: number }> {
    const userId = await this.accountOfSender(ids);
    return { userId, sessions: userId ? await this.endAll(userId, meta, 'stop') : 0 };
  }

  /** The sender's own account (identities.ts's recycled-number rule), or null. */
  accountOfSender(ids: readonly Identity[]): Promise<string | null> {
    return accountOfSender(ids, {
      linked: ({ kind, value }) => this.redis.get(this.keys.identity(kind, value)),
      stableId: (uid, kind) => this.redis.hget(this.keys.user(uid), `id:${kind}`),
    });
  }
}

/**
 * The user hash's fields a profile shows, read with HMGET: an array reply, where HGETALL's
 * object conversion and a second reply shape cost a tenth of a profile request's instructions.
 */
const USER_FIELDS = ['id', 'name', 'surname', 'phone', 'roles'] as const;

function userFrom([id, name, surname, phone, roles]: (string | null)[]): User {
  if (!id) throw new AppError('AUTHENTICATION_FAILED', 'User not found');
  // the phone only when the account has one (a person may sign in by LID or user id alone)
  return { id, name: name ?? '', surname: surname ?? '', ...(phone ? { phone } : {}), roles: parseRoles(roles, []) };
}
