import type { Redis } from 'ioredis';
import { AppError } from '../errors.js';
import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';
import { newShortId } from './ids.js';
import type { User } from './login-result.js';
import type { TokenClaims, TokenService } from './tokens.js';

/**
 * Sessions: each login opens one in Redis (`sess:<sid>` = user id + current refresh jti).
 * An access token is good while its session is open; refresh rotates the jti; any older jti
 * presented again is a spent token, and closes the session (reuse detection).
 */
export interface IssuedPair {
  token: string;
  refreshToken: string;
}

export class Sessions {
  constructor(
    private readonly redis: Redis,
    private readonly scripts: Scripts,
    private readonly keys: Keys,
    private readonly tokens: TokenService,
  ) {}

  /** Verifies a bearer access token and that its session is still open. */
  async authenticate(bearer: string | undefined, opts: { allowExpired?: boolean } = {}): Promise<TokenClaims> {
    if (!bearer) throw new AppError('AUTHENTICATION_FAILED', 'Missing bearer token');
    const claims = this.tokens.verify(bearer, 'access', opts);
    const owner = await this.redis.hget(this.keys.session(claims.sid), 'u');
    if (owner !== claims.sub) throw new AppError('AUTHENTICATION_FAILED', 'Session closed');
    return claims;
  }

  /** `{refreshToken}` form: rotate the presented refresh token. */
  async refreshWithToken(access: TokenClaims, refreshToken: string): Promise<IssuedPair> {
    const refresh = this.tokens.verify(refreshToken, 'refresh');
    if (refresh.sub !== access.sub || refresh.sid !== access.sid) {
      throw new AppError('AUTHENTICATION_FAILED', 'Tokens do not belong together');
    }
    return this.rotate(refresh.sub, refresh.sid, refresh.jti);
  }

  /** `{id}` form: an unexpired access token whose subject is `id` rotates its session. */
  async refreshWithId(access: TokenClaims, id: string): Promise<IssuedPair> {
    if (access.exp * 1000 <= Date.now()) throw new AppError('AUTHENTICATION_FAILED', 'Access token expired');
    if (access.sub !== id) throw new AppError('FORBIDDEN', 'The id does not match the token');
    return this.rotate(access.sub, access.sid, '*');
  }

  private async rotate(userId: string, sid: string, presentedJti: string): Promise<IssuedPair> {
    const user = await this.user(userId);
    const newJti = newShortId();
    const outcome = await this.scripts.string('rotate-session', [
      this.keys.prefix,
      sid,
      userId,
      presentedJti,
      newJti,
      this.tokens.refreshTtl * 1000,
    ]);
    if (outcome === 'reuse') throw new AppError('AUTHENTICATION_FAILED', 'Refresh token already used; session closed');
    if (outcome !== 'ok') throw new AppError('AUTHENTICATION_FAILED', 'Session closed');
    const pair = this.tokens.issuePair(userId, sid, user.roles, newJti);
    return { token: pair.token, refreshToken: pair.refreshToken };
  }

  async logout(access: TokenClaims, id: string): Promise<void> {
    if (access.sub !== id) throw new AppError('FORBIDDEN', 'Cannot log out another user');
    await this.redis.del(this.keys.session(access.sid));
  }

  async user(id: string): Promise<User> {
    const h = await this.redis.hgetall(this.keys.user(id));
    if (!h.id) throw new AppError('AUTHENTICATION_FAILED', 'User not found');
    return {
      id: h.id,
      name: h.name ?? '',
      surname: h.surname ?? '',
      phone: h.phone ?? '',
      roles: parseRoles(h.roles),
    };
  }
}

function parseRoles(raw: string | undefined): string[] {
  try {
    const v: unknown = JSON.parse(raw ?? '[]');
    return Array.isArray(v) ? v.filter((r): r is string => typeof r === 'string') : [];
  } catch {
    return [];
  }
}
