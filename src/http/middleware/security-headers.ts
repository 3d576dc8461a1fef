import helmet from 'koa-helmet';
import type { Middleware, Next } from 'koa';
import type { AppContext } from '../context.js';

/** Paths that serve HTML for people (the queue dashboard); everything else is the JSON API. */
const HTML_PREFIX = '/admin/';

/**
 * koa-helmet's headers on every response (errors included: they are set before the route runs).
 * The API answers only JSON, so its Content-Security-Policy allows nothing at all and forbids
 * framing; the dashboard keeps helmet's default policy, which its bundled scripts and inline
 * styles need.
 */
export function securityHeaders(): (ctx: AppContext, next: Next) => Promise<void> {
  const api: Middleware = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  });
  const html: Middleware = helmet();
  return (ctx, next) => (ctx.path.startsWith(HTML_PREFIX) ? html(ctx, next) : api(ctx, next)) as Promise<void>;
}
