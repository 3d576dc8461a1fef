import { createHash, createHmac, createSecretKey, timingSafeEqual, type Hmac, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { parseBearer } from '../auth/bearer.js';

/**
 * Who may post to the webhook. Configured methods (any one suffices):
 * - WEBHOOK_SECRET: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the exact raw body>` (Meta);
 * - WEBHOOK_JWT_KEY: `Authorization: Bearer <HS256 JWT>` as Evolution API (2.3+) makes it from
 *   the `jwt_key` webhook header: header `{alg: HS256, typ: JWT}`, claims exactly
 *   `{iat, exp: iat + 600, app: "evolution", action: "webhook"}`, one token per event, sent
 *   again on every retry of that event;
 * - WEBHOOK_BEARER_KEY: `Authorization: Bearer <key>`, a static header (Evolution 2.1–2.2 can
 *   send only static headers);
 * - WEBHOOK_PATH_SECRET: the secret as a path segment (setups that send no header at all).
 * Every comparison is constant-time. A path with a segment that is not the secret fails
 * whatever else the request carries (a wrong URL is a misconfiguration to see, not to mask).
 * With none configured the webhook is open (refused in production at start).
 * All but the HMAC are decided from the request's head (`beforeBody`), so a request that offers
 * none of them is refused before a byte of its body is read.
 */
export interface WebhookAuthSettings {
  secret: string | undefined;
  jwtKey: string | undefined;
  bearerKey?: string | undefined;
  pathSecret?: string | undefined;
}

/** What a request offers to authenticate itself. */
export interface WebhookCredentials {
  signature: string | undefined;
  authorization: string | undefined;
  /** the path segment that may be the path secret */
  pathSecret: string | undefined;
}

/**
 * What the request's head says: `true` (a header, token or path secret passed, or the webhook is
 * open), `false` (nothing can pass: refuse without reading the body), or the HMAC the body must
 * have (the signature offered, 32 bytes: hash the body as it arrives, then `bodyMatches`).
 */
export type HeadVerdict = boolean | Buffer;

/** Evolution's token lifetime (`exp - iat`), the longest we take. */
export const EVOLUTION_JWT_LIFETIME_SECONDS = 600;

/** Allowed difference between Evolution's clock and ours when checking `exp`. */
export const JWT_CLOCK_TOLERANCE_SECONDS = 30;
/** Tokens already verified, by their text: Evolution signs one per event and second, so a burst repeats them. */
const VERIFIED_CACHE_SIZE = 256;
/** `X-Hub-Signature-256`: Meta's form, surrounding spaces tolerated. */
const SIGNATURE = /^\s*sha256=([0-9a-fA-F]{64})\s*$/;

export class WebhookAuth {
  private readonly hmacKey: KeyObject | undefined;
  private readonly jwtKey: KeyObject | undefined;
  private readonly bearerKey: string | undefined;
  private readonly pathSecret: string | undefined;
  /** token → its `exp` in ms; only tokens whose signature verified */
  private readonly verified = new Map<string, number>();

  constructor(settings: WebhookAuthSettings) {
    this.hmacKey = settings.secret ? createSecretKey(Buffer.from(settings.secret, 'utf8')) : undefined;
    this.jwtKey = settings.jwtKey ? createSecretKey(Buffer.from(settings.jwtKey, 'utf8')) : undefined;
    this.bearerKey = settings.bearerKey || undefined;
    this.pathSecret = settings.pathSecret || undefined;
  }

  get open(): boolean {
    return this.hmacKey === undefined && this.jwtKey === undefined && this.bearerKey === undefined && this.pathSecret === undefined;
  }

  /** The decision the head allows, before any of the body is read (see HeadVerdict). */
  beforeBody(given: WebhookCredentials): HeadVerdict {
    if (given.pathSecret !== undefined) {
      // a segment where the secret goes: it must be the secret, whatever else is offered
      return this.pathSecret !== undefined && sameSecret(given.pathSecret, this.pathSecret);
    }
    if (this.open) return true;
    const { signature, authorization } = given;
    if (authorization !== undefined) {
      if (this.jwtKey && this.jwtMatches(authorization)) return true;
      if (this.bearerKey) {
        const token = parseBearer(authorization);
        if (token !== null && sameSecret(token, this.bearerKey)) return true;
      }
    }
    if (this.hmacKey === undefined || signature === undefined) return false;
    const m = SIGNATURE.exec(signature);
    return m ? Buffer.from(m[1]!, 'hex') : false;
  }

  /** The HMAC to feed the body to, chunk by chunk (only when `beforeBody` returned a signature). */
  bodyHasher(): Hmac {
    return createHmac('sha256', this.hmacKey!);
  }

  /** The body fed to `hasher` has the signature `beforeBody` returned. */
  static bodyMatches(hasher: Hmac, signature: Buffer): boolean {
    return timingSafeEqual(hasher.digest(), signature);
  }

  /** True when a request with this whole body passes one configured method (always, when none is configured). */
  verify(rawBody: Buffer, given: WebhookCredentials): boolean {
    const verdict = this.beforeBody(given);
    if (typeof verdict === 'boolean') return verdict;
    return WebhookAuth.bodyMatches(this.bodyHasher().update(rawBody), verdict);
  }

  /** For clients and tests: the header value a signing gateway would send. */
  static sign(rawBody: Buffer | string, secret: string): string {
    return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
  }

  private jwtMatches(header: string): boolean {
    const token = parseBearer(header);
    if (token === null) return false;
    const now = Date.now();
    const known = this.verified.get(token);
    if (known !== undefined) {
      if (now < known + JWT_CLOCK_TOLERANCE_SECONDS * 1000) return true;
      this.verified.delete(token);
      return false;
    }
    let verified: jwt.Jwt;
    try {
      verified = jwt.verify(token, this.jwtKey!, { algorithms: ['HS256'], clockTolerance: JWT_CLOCK_TOLERANCE_SECONDS, complete: true });
    } catch {
      return false;
    }
    if (!isEvolutionWebhookToken(verified, now)) return false;
    const payload = verified.payload as jwt.JwtPayload & { exp: number };
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.clear();
    this.verified.set(token, payload.exp * 1000);
    return true;
  }
}

/**
 * The token is one Evolution made for a webhook, and nothing else signed with the same key: type
 * `JWT`, `app: "evolution"` and `action: "webhook"`, an `iat` not in the future and an `exp` at
 * most Evolution's 600 s after it (a token without `exp` would be good for ever; a longer one
 * was not made by Evolution), and none of the claims our own tokens carry (`typ`, `sub`,
 * `sid`, `jti`), so an access token can never pass even if the keys were ever the same.
 */
function isEvolutionWebhookToken(token: jwt.Jwt, nowMs: number): boolean {
  if (token.header.typ !== undefined && token.header.typ !== 'JWT') return false;
  const p = token.payload;
  if (typeof p !== 'object' || p === null) return false;
  const claims = p as Record<string, unknown>;
  if (claims.app !== 'evolution' || claims.action !== 'webhook') return false;
  if (['typ', 'sub', 'sid', 'jti'].some((c) => c in claims)) return false;
  const { iat, exp } = claims;
  if (typeof iat !== 'number' || typeof exp !== 'number' || !Number.isFinite(iat) || !Number.isFinite(exp)) return false;
  if (iat * 1000 > nowMs + JWT_CLOCK_TOLERANCE_SECONDS * 1000) return false;
  return exp > iat && exp - iat <= EVOLUTION_JWT_LIFETIME_SECONDS;
}

/** Constant-time comparison of two strings of any length (the handshake's verify token). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
