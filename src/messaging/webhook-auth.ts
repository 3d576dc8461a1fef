import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';

/**
 * Who may post to the webhook. Configured methods (any one suffices):
 * - WEBHOOK_SECRET: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the exact raw body>` (Meta);
 * - WEBHOOK_JWT_KEY: `Authorization: Bearer <HS256 JWT>` signed with the key, unexpired (Evolution's jwt_key).
 * With none configured the webhook is open (refused in production at start).
 */
export interface WebhookAuthSettings {
  secret: string | undefined;
  jwtKey: string | undefined;
}

export class WebhookAuth {
  private readonly hmacKey: KeyObject | undefined;
  private readonly jwtKey: KeyObject | undefined;

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
    const given = Buffer.from(m[1]!.toLowerCase(), 'hex');
    const expected = createHmac('sha256', this.hmacKey!).update(rawBody).digest();
    return timingSafeEqual(given, expected);
  }

  private jwtMatches(header: string): boolean {
    const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
    if (!m) return false;
    try {
      const payload = jwt.verify(m[1]!, this.jwtKey!, { algorithms: ['HS256'] });
      return typeof payload === 'object' && typeof payload.exp === 'number';
    } catch {
      return false;
    }
  }
}
