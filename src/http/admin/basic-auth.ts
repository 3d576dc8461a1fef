import { createHash, timingSafeEqual } from 'node:crypto';
import type { Next } from 'koa';
import { AppError } from '../../errors.js';
import type { AppContext } from '../context.js';
import { parseBearer } from '../../auth/bearer.js';
import type { AdminLoginThrottle } from './login-throttle.js';

/**
 * Guards the operator pages. Secrets are compared as SHA-256 digests with timingSafeEqual, so
 * neither the length nor the first wrong byte of a guess shows in the response time; user and
 * password are checked together, so a right user name is not told apart from a wrong one.
 */
const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

export function secretEquals(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** `user:password` from an `Authorization: Basic …` header, or null. */
export function basicCredentials(header: string): string | null {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  return decoded.includes(':') ? decoded : null;
}

export interface AdminCredentials {
  /** basic auth is accepted only when both are set */
  user?: string;
  password?: string;
  /** also accepted as `Authorization: Bearer <token>` where the guard allows it */
  bearer?: string;
}

export const BASIC_CHALLENGE = 'Basic realm="pin-auth admin", charset="UTF-8"';

/**
 * 401 AUTHENTICATION_FAILED with a Basic challenge unless the request carries the credentials;
 * 429 RATE_LIMITED once the client's IP group has spent its budget of wrong ones (throttle).
 */
export function adminGuard(creds: AdminCredentials, throttle?: AdminLoginThrottle) {
  const expected = creds.user !== undefined && creds.password !== undefined ? `${creds.user}:${creds.password}` : null;
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const state = throttle ? await throttle.state(ctx.ip) : { failures: 0, retryAfter: null };
    if (state.retryAfter !== null) {
      ctx.state.log.warn('admin login refused: too many failures', { ipGroup: throttle?.group(ctx.ip) ?? ctx.ip, path: ctx.path });
      throw new AppError('RATE_LIMITED', 'Too many failed admin logins from this address', { retryAfter: state.retryAfter });
    }
    const header = ctx.get('authorization');
    const basic = basicCredentials(header);
    const bearer = creds.bearer === undefined ? null : parseBearer(header);
    const ok =
      (basic !== null && expected !== null && secretEquals(basic, expected)) ||
      (bearer !== null && creds.bearer !== undefined && secretEquals(bearer, creds.bearer));
    if (!ok) {
      if (throttle && header !== '') await throttle.failed(ctx.ip, ctx.path);
      ctx.set('WWW-Authenticate', BASIC_CHALLENGE);
      throw new AppError('AUTHENTICATION_FAILED', 'Admin credentials required');
    }
    if (throttle) await throttle.succeeded(ctx.ip, ctx.path, state.failures);
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}
