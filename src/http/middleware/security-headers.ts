import helmet from 'koa-helmet';
import type { Middleware, Next } from 'koa';
import type { AppContext } from '../context.js';

/** Paths that serve HTML for people (the queue dashboard); everything else is the JSON API. */
const HTML_PREFIX = '/admin/';

const apiHelmet = (): Middleware =>
  helmet({ contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } } });

/**
 * The API's headers as a fixed list, for a handler outside Koa (fast-webhook.ts): the same
 * helmet middleware, run once against a response that only records what it is given.
 */
export async function apiSecurityHeaders(): Promise<[string, string][]> {
  const headers = new Map<string, string>();
  const res = {
    setHeader: (name: string, value: unknown) => headers.set(name, String(value)),
    removeHeader: (name: string) => headers.delete(name),
    getHeader: (name: string) => headers.get(name),
  };
  const ctx = { req: { headers: {}, method: 'POST', url: '/' }, res } as unknown as AppContext;
  await apiHelmet()(ctx, async () => undefined);
  return [...headers];
}

/**
 * koa-helmet's headers on every response (errors included: they are set before the route runs).
 * The API answers only JSON, so its Content-Security-Policy allows nothing at all and forbids
 * framing; the dashboard keeps helmet's default policy, which its bundled scripts and inline
 * styles need.
 */
export function securityHeaders(): (ctx: AppContext, next: Next) => Promise<void> {
  const api = apiHelmet();
  const html: Middleware = helmet();
  return (ctx, next) => (ctx.path.startsWith(HTML_PREFIX) ? html(ctx, next) : api(ctx, next)) as Promise<void>;
}
