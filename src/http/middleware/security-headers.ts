import helmet from 'koa-helmet';
import type { Middleware, Next } from 'koa';
import type { AppContext } from '../context.js';

/** The queue dashboard: Bull Board's bundle needs helmet's default policy. */
const ADMIN_PREFIX = '/admin/';
/** The admin API: JSON like the rest of the API. */
const ADMIN_API_PREFIX = '/admin/api/';
/** The operator console's page (docs/accounts.md). */
const CONSOLE_PATH = '/admin';

/** Our own pages (login page, API reference) and their assets; everything else is the JSON API. */
const isPagePath = (p: string): boolean => p === '/' || p === '/docs' || p.startsWith('/docs/') || p.startsWith('/demo/');

/**
 * Pages we write ourselves: scripts and styles from this origin only (no inline script), images
 * from here or data: URLs (the QR code), sockets and fetches to this origin. Unlike helmet's
 * default there is no upgrade-insecure-requests, which would break a page opened over plain
 * http://localhost.
 */
const pageHelmet = (frame: 'sameorigin' | 'deny' = 'sameorigin'): Middleware =>
  helmet({
    xFrameOptions: { action: frame },
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
  });

/**
 * The API's answers hold tokens and personal data: no cache may keep them (RFC 6749 §5.1 for
 * token answers; the rest are per user too). A route that may be cached (JWKS) sets its own.
 */
const apiHelmet = (frame: 'sameorigin' | 'deny' = 'sameorigin'): Middleware => {
  const headers = helmet({
    xFrameOptions: { action: frame },
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  });
  return (ctx, next) => {
    ctx.res.setHeader('Cache-Control', 'no-store');
    return headers(ctx, next) as Promise<void>;
  };
};

/**
 * koa-helmet's headers on every response (errors included: they are set before the route runs).
 * The API answers only JSON, so its Content-Security-Policy allows nothing at all and forbids
 * framing; the dashboard keeps helmet's default policy, which its bundled scripts and inline
 * styles need; our pages get the policy above. Nothing under /admin may be framed, not even by
 * this origin (frame-ancestors 'none', X-Frame-Options DENY: clickjacking an operator's click):
 * the admin API gets the API's policy, the console the pages' one.
 */
export function securityHeaders(): (ctx: AppContext, next: Next) => Promise<void> {
  const api = apiHelmet();
  const adminApi = apiHelmet('deny');
  const admin: Middleware = helmet({ xFrameOptions: { action: 'deny' }, contentSecurityPolicy: { directives: { frameAncestors: ["'none'"] } } });
  const pages = pageHelmet();
  const consolePage = pageHelmet('deny');
  return (ctx, next) => {
    const p = ctx.path;
    if (p.startsWith(ADMIN_API_PREFIX)) return adminApi(ctx, next) as Promise<void>;
    if (p === CONSOLE_PATH) return consolePage(ctx, next) as Promise<void>;
    if (p.startsWith(ADMIN_PREFIX)) return admin(ctx, next) as Promise<void>;
    return (isPagePath(p) ? pages(ctx, next) : api(ctx, next)) as Promise<void>;
  };
}
