import cors from '@koa/cors';
import type { Middleware } from 'koa';

/**
 * CORS for browser clients on other origins: only the origins in CORS_ORIGINS get
 * `Access-Control-Allow-Origin` (their own, never `*`). With an empty list no middleware is
 * mounted and browsers on other origins cannot read any response. No cookies are used, so
 * credentials are never allowed.
 */
export function corsAllowlist(origins: readonly string[]): Middleware | null {
  if (origins.length === 0) return null;
  const allowed = new Set(origins);
  return cors({
    origin: (ctx) => {
      const origin = ctx.get('Origin');
      return allowed.has(origin) ? origin : '';
    },
    allowMethods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'Idempotency-Key'],
    exposeHeaders: ['Retry-After', 'X-Request-Id'],
    maxAge: 600,
    credentials: false,
  });
}
