import { createHash, createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { parseBearer } from '../auth/bearer.js';

/**
 * Who may post to the webhook. Configured methods (any one suffices):
 * - WEBHOOK_SECRET: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the exact raw body>` (Meta);
 * - WEBHOOK_JWT_KEY: `Authorization: Bearer <HS256 JWT>` signed with the key, with an `exp` not
 *   past (Evolution API's `jwt_key` webhook header: it signs `{iat, exp: iat + 600, app, action}`
 *   for each event, and sends the same token on every retry of that event).
 * With none configured the webhook is open (refused in production at start).
 */
export interface WebhookAuthSettings {
  secret: string | undefined;
  jwtKey: string | undefined;
}

/** Allowed difference between Evolution's clock and ours when checking `exp`. */
export const JWT_CLOCK_TOLERANCE_SECONDS = 30;
/** Tokens already verified, by their text: Evolution signs one per event and second, so a burst repeats them. */
const VERIFIED_CACHE_SIZE = 256;

export class WebhookAuth {
  private readonly hmacKey: KeyObject | undefined;
  private readonly jwtKey: KeyObject | undefined;
  /** token → its `exp` in ms; only tokens whose signature verified */
  private readonly verified = new Map<string, number>();

  constructor(settings: WebhookAuthSettings) {
    this.hmacKey = settings.secret ? createSecretKey(Buffer.from(settings.secret, 'utf8')) : undefined;
    this.jwtKey = settings.jwtKey ? createSecretKey(Buffer.from(settings.jwtKey, 'utf8')) : undefined;
  }

  get open(): boolean {
    return this.hmacKey === undefined && this.jwtKey === undefined;
  }

  /** True when the request passes one configured method (always, when none is configured). */
  verify(rawBody: Buffer, signatureHeader: string | undefined, authorizationHeader: string | undefined): boolean {
    if (this.open) return true;
    if (this.hmacKey && signatureHeader !== undefined && this.signatureMatches(rawBody, signatureHeader)) return true;
    if (this.jwtKey && authorizationHeader !== undefined && this.jwtMatches(authorizationHeader)) return true;
    return false;
  }

  /** For clients and tests: the header value a signing gateway would send. */
  static sign(rawBody: Buffer | string, secret: string): string {
    return 'sha256=' + createHmac('sha256', secret).update(rawBody).digest('hex');
  }

  private signatureMatches(rawBody: Buffer, header: string): boolean {
    const m = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
    if (!m) return false;
    const given = Buffer.from(m[1]!, 'hex');
    const expected = createHmac('sha256', this.hmacKey!).update(rawBody).digest();
    return timingSafeEqual(given, expected);
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
    let payload: string | jwt.JwtPayload;
    try {
      payload = jwt.verify(token, this.jwtKey!, { algorithms: ['HS256'], clockTolerance: JWT_CLOCK_TOLERANCE_SECONDS });
    } catch {
      return false;
    }
    // A token without `exp` would be good for ever: Evolution always sets one, so we insist.
    if (typeof payload !== 'object' || typeof payload.exp !== 'number') return false;
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.clear();
    this.verified.set(token, payload.exp * 1000);
    return true;
  }
}

/** Constant-time comparison of two strings of any length (the handshake's verify token). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
