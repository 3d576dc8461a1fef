import { LRUCache } from 'lru-cache';
import { VERIFIED_ACCESS_TOKENS } from '../config.js';
import { AppError } from '../errors.js';
import { remembered } from '../remembered.js';
import { newShortId } from '../ids.js';
import type { KeyRing } from './key-ring.js';

/**
 * Access and refresh JWTs, signed with the key ring's active key (ES256 by default, EdDSA, or
 * HS256 by configuration) and verified with whichever ring key the token's `kid` names, its
 * algorithm pinned to that key. Refresh tokens are HS256 under the named key's derived refresh
 * key (key-ring.ts). Both directions use node:crypto on KeyObjects prepared once: a login signs two tokens
 * on the worker's hot path, and jsonwebtoken neither knows EdDSA nor verifies ES256 as fast
 * (docs/benchmark.md, "Optimisations kept").
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
  /** never issued by us; honoured if present */
  nbf?: number;
}

export interface TokenPair {
  token: string;
  refreshToken: string;
  refreshJti: string;
}

export interface TokenSettings {
  issuer: string;
  accessTtl: number;
  refreshTtl: number;
  /** access tokens remembered as verified (VERIFIED_TOKEN_CACHE); 0: none; default VERIFIED_ACCESS_TOKENS */
  verifiedCache?: number;
}

const SEGMENT = /^[A-Za-z0-9_-]+$/;

function isClaims(p: unknown): p is TokenClaims {
  if (typeof p !== 'object' || p === null) return false;
  const c = p as Record<string, unknown>;
  return (
    typeof c.sub === 'string' &&
    (c.typ === 'access' || c.typ === 'refresh') &&
    typeof c.jti === 'string' &&
    typeof c.sid === 'string' &&
    typeof c.exp === 'number' &&
    (c.nbf === undefined || typeof c.nbf === 'number')
  );
}

function parseSegment(segment: string): unknown {
  if (!SEGMENT.test(segment)) return undefined;
  try {
    return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * A token's JOSE header, parsed once per distinct text: every token a ring key signs carries the
 * same few headers, and decoding one (base64url, JSON) was a tenth of a refresh token's check.
 * The parsed object is shared between calls and only read. Bounded against headers made up by
 * strangers (remembered.ts).
 */
const parseHeader = remembered(parseSegment, 64);

/** A signed JWT: the key's JOSE header, the claims, the key's signature. */
function signWith(key: { header: string; sign(input: string): string }, claims: TokenClaims): string {
  const unsigned = `${key.header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${unsigned}.${key.sign(unsigned)}`;
}

const invalid = (): AppError => new AppError('AUTHENTICATION_FAILED', 'Invalid or expired token');

export class TokenService {
  private ring: KeyRing | undefined;
  /**
   * Least recently used first out (lru-cache), so the whole bound holds tokens: clients polling
   * in turn, as many as the bound, all hit (docs/benchmark.md, "Optimisations kept").
   */
  private readonly verified: LRUCache<string, TokenClaims> | undefined;

  constructor(
    private readonly settings: TokenSettings,
    ring?: KeyRing,
  ) {
    this.ring = ring;
    const bound = settings.verifiedCache ?? VERIFIED_ACCESS_TOKENS;
    this.verified = bound > 0 ? new LRUCache<string, TokenClaims>({ max: bound }) : undefined;
  }

  /** Installs the ring (at start, once Redis has given the generated key if there is one). */
  useKeys(ring: KeyRing): void {
    this.ring = ring;
    // a token is only as good as the key that signed it: another ring verifies everything again
    this.verified?.clear();
  }

  get keys(): KeyRing {
    // Only reachable if a request or job arrives before the ring loaded: Redis is not there yet.
    if (!this.ring) throw new AppError('NETWORK_ERROR', 'Signing keys are not loaded yet');
    return this.ring;
  }

  get refreshTtl(): number {
    return this.settings.refreshTtl;
  }

  /**
   * Signs a pair for a session. The refresh jti is chosen by the caller (it is stored in the
   * session). `remember`: a web node that hands the pair out counts the access token as verified
   * (it signed it), so the client's next request with it skips the signature check.
   */
  issuePair(userId: string, sid: string, roles: string[], refreshJti: string, opts: { remember?: boolean } = {}): TokenPair {
    const iat = Math.floor(Date.now() / 1000);
    const iss = this.settings.issuer;
    const key = this.keys.active;
    const refreshKey = key.refresh;
    if (refreshKey === undefined) throw new Error(`key ${key.kid} is verify-only`);
    const access: TokenClaims = { typ: 'access', sid, roles, iat, exp: iat + this.settings.accessTtl, iss, sub: userId, jti: newShortId() };
    const token = signWith(key, access);
    const refreshToken = signWith(refreshKey, { typ: 'refresh', sid, iat, exp: iat + this.settings.refreshTtl, iss, sub: userId, jti: refreshJti });
    if (opts.remember) this.verified?.set(token, access);
    return { token, refreshToken, refreshJti };
  }

  /**
   * Verifies key, algorithm, signature, issuer, time and type. `allowExpired` lets
   * /refresh-token accept a lapsed access token as proof of identity; `replacing` says the caller
   * exchanges the token for a new one (/refresh-token): checked the same, but neither remembered
   * nor made recent, as the client presents its successor (remembered when signed) from then on.
   * Failures are AUTHENTICATION_FAILED, except an expired refresh token, which is
   * REFRESH_TOKEN_EXPIRED.
   */
  verify(token: string, typ: TokenType, opts: { allowExpired?: boolean; replacing?: boolean } = {}): TokenClaims {
    const cached = opts.replacing === true ? this.verified?.peek(token) : this.verified?.get(token);
    const claims = cached ?? this.verifySignature(token, typ);
    const now = Math.floor(Date.now() / 1000);
    if (claims.nbf !== undefined && claims.nbf > now) throw invalid();
    if (now >= claims.exp && opts.allowExpired !== true) {
      if (claims.typ === 'refresh' && typ === 'refresh') throw new AppError('REFRESH_TOKEN_EXPIRED');
      throw invalid();
    }
    if (claims.typ !== typ) throw invalid();
    // refresh tokens are presented once each: only access tokens are remembered
    if (cached === undefined && typ === 'access' && now < claims.exp && opts.replacing !== true) this.verified?.set(token, claims);
    return claims;
  }

  /**
   * Key, algorithm, signature, issuer and the claims' shape: what does not change with time. A
   * refresh token is HS256 under the named key's refresh key; an access token carries the named
   * key's own algorithm.
   */
  private verifySignature(token: string, typ: TokenType): TokenClaims {
    const first = token.indexOf('.');
    const last = token.lastIndexOf('.');
    if (first <= 0 || last !== token.indexOf('.', first + 1) || last === token.length - 1) throw invalid();
    const header = parseHeader(token.slice(0, first));
    if (typeof header !== 'object' || header === null) throw invalid();
    const { alg, kid, crit } = header as Record<string, unknown>;
    const ringKey = this.keys.find(kid);
    // The key decides the algorithm: an access token naming an ES256 key with alg HS256 (keyed
    // with the public key, the classic confusion) or alg none never reaches a signature check. A
    // refresh token is HS256 under the key's refresh key: a secret derived from the private part.
    const key = typ === 'refresh' ? ringKey?.refresh : ringKey;
    const expected = typ === 'refresh' ? 'HS256' : ringKey?.alg;
    if (key === undefined || alg !== expected || crit !== undefined) throw invalid();
    const signature = token.slice(last + 1);
    if (!SEGMENT.test(signature) || !key.verify(token.slice(0, last), Buffer.from(signature, 'base64url'))) throw invalid();
    const claims = parseSegment(token.slice(first + 1, last));
    if (!isClaims(claims) || claims.iss !== this.settings.issuer) throw invalid();
    return claims;
  }
}
