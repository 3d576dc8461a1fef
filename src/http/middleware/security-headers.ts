import helmet from 'koa-helmet';
import type { Middleware, Next } from 'koa';
import type { AppContext } from '../context.js';

/** The queue dashboard: Bull Board's bundle needs helmet's default policy. */
const ADMIN_PREFIX = '/admin/';

/** Our own pages (login page, API reference) and their assets; everything else is the JSON API. */
const isPagePath = (p: string): boolean => p === '/' || p === '/docs' || p.startsWith('/docs/') || p.startsWith('/demo/');

/**
 * Pages we write ourselves: scripts and styles from this origin only (no inline script), images
 * from here or data: URLs (the QR code), sockets and fetches to this origin. Unlike helmet's
 * default there is no upgrade-insecure-requests, which would break a page opened over plain
 * http://localhost.
 */
const pageHelmet = (): Middleware =>
  helmet({
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
const apiHelmet = (): Middleware => {
  const headers = helmet({ contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } } });
  return (ctx, next) => {
    ctx.res.setHeader('Cache-Control', 'no-store');
    return headers(ctx, next) as Promise<void>;
  };
};

/**
 * koa-helmet's headers on every response (errors included: they are set before the route runs).
 * The API answers only JSON, so its Content-Security-Policy allows nothing at all and forbids
 * framing; the dashboard keeps helmet's default policy, which its bundled scripts and inline
 * styles need; our pages get the policy above.
 */
export function securityHeaders(): (ctx: AppContext, next: Next) => Promise<void> {
  const api = apiHelmet();
  const admin: Middleware = helmet();
  const pages = pageHelmet();
  return (ctx, next) => (ctx.path.startsWith(ADMIN_PREFIX) ? admin(ctx, next) : isPagePath(ctx.path) ? pages(ctx, next) : api(ctx, next)) as Promise<void>;
}
