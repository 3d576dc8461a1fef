import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import jwt, { type JwtPayload } from 'jsonwebtoken';
import { AppError } from '../errors.js';
import { newShortId } from './ids.js';

/**
 * Access and refresh JWTs (HS256, algorithm pinned on verify). The key is a KeyObject built
 * once: jsonwebtoken signs ~70x faster with it than with a string secret.
 */
export type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  sub: string;
  typ: TokenType;
  jti: string;
  sid: string;
  iat: number;
  exp: number;
  iss: string;
  roles?: string[];
}

export interface TokenPair {
  token: string;
  refreshToken: string;
  refreshJti: string;
}

export interface TokenSettings {
  secret: string;
  issuer: string;
  accessTtl: number;
  refreshTtl: number;
}

const ALGORITHMS: jwt.Algorithm[] = ['HS256'];
const HS256_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

function isClaims(p: string | JwtPayload): p is JwtPayload & TokenClaims {
  return (
    typeof p === 'object' &&
    typeof p.sub === 'string' &&
    (p.typ === 'access' || p.typ === 'refresh') &&
    typeof p.jti === 'string' &&
    typeof p.sid === 'string' &&
    typeof p.exp === 'number'
  );
}

export class TokenService {
  private readonly key: KeyObject;

  constructor(private readonly settings: TokenSettings) {
    this.key = createSecretKey(Buffer.from(settings.secret, 'utf8'));
  }

  get refreshTtl(): number {
    return this.settings.refreshTtl;
  }

  /**
   * Signs a pair for a session. The refresh jti is chosen by the caller (it is stored in the
   * session). Signing is done here, not by jsonwebtoken: HS256 is one HMAC over a fixed header
   * and the claims, and a login signs two tokens on the worker's hot path. Verification stays
   * with jsonwebtoken (algorithm pinned).
   */
  issuePair(userId: string, sid: string, roles: string[], refreshJti: string): TokenPair {
    const iat = Math.floor(Date.now() / 1000);
    const iss = this.settings.issuer;
    const token = this.sign({ typ: 'access', sid, roles, iat, exp: iat + this.settings.accessTtl, iss, sub: userId, jti: newShortId() });
    const refreshToken = this.sign({ typ: 'refresh', sid, iat, exp: iat + this.settings.refreshTtl, iss, sub: userId, jti: refreshJti });
    return { token, refreshToken, refreshJti };
  }

  private sign(claims: TokenClaims): string {
    const unsigned = `${HS256_HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return `${unsigned}.${createHmac('sha256', this.key).update(unsigned).digest('base64url')}`;
  }

  /**
   * Verifies signature, algorithm, issuer and type. `allowExpired` lets /refresh-token accept a
   * lapsed access token as proof of identity. Failures are AUTHENTICATION_FAILED, except an
   * expired refresh token, which is REFRESH_TOKEN_EXPIRED.
   */
  verify(token: string, typ: TokenType, opts: { allowExpired?: boolean } = {}): TokenClaims {
    let payload: string | JwtPayload;
    try {
      payload = jwt.verify(token, this.key, {
        algorithms: ALGORITHMS,
        issuer: this.settings.issuer,
        ignoreExpiration: opts.allowExpired === true,
      });
    } catch (err) {
      if (err instanceof jwt.TokenExpiredError && typ === 'refresh') {
        throw new AppError('REFRESH_TOKEN_EXPIRED');
      }
      throw new AppError('AUTHENTICATION_FAILED', 'Invalid or expired token');
    }
    if (!isClaims(payload) || payload.typ !== typ) {
      throw new AppError('AUTHENTICATION_FAILED', 'Invalid or expired token');
    }
    return payload;
  }
}
