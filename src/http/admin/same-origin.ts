import type { Next } from 'koa';
import { AppError } from '../../errors.js';
import type { AppContext } from '../context.js';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a browser says the request comes from a page of another origin: Sec-Fetch-Site other
 * than same-origin or none (a typed address, a bookmark), or an Origin whose host is not ours
 * (`null` included: a sandboxed frame, a file). A request without either (curl, a server, a
 * browser too old to send them) is not told apart, so this guards browsers' ambient requests,
 * not machines.
 */
export function fromAnotherSite(ctx: AppContext): boolean {
  const site = ctx.get('sec-fetch-site');
  if (site !== '' && site !== 'same-origin' && site !== 'none') return true;
  const origin = ctx.get('origin');
  if (origin === '') return false;
  try {
    return new URL(origin).host !== ctx.host;
  } catch {
    return true;
  }
}

/**
 * Cross-site request forgery guard for the dashboard's actions. A browser that has the admin's
 * basic-auth login cached sends it with any request, even one a foreign page triggers; Bull
 * Board's API can add jobs, and a forged `inbound` job would sign someone in. So a changing
 * request must come from this origin (Origin / Sec-Fetch-Site, when the browser sends them) and
 * carry JSON or nothing: a cross-site form or no-cors fetch can send neither without CORS.
 */
export function sameOriginWrites() {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    if (!SAFE.has(ctx.method)) {
      const hasBody = ctx.request.length > 0 || ctx.get('transfer-encoding') !== '';
      if (fromAnotherSite(ctx) || (hasBody && !ctx.is('application/json'))) {
        throw new AppError('FORBIDDEN', 'Dashboard actions must come from the dashboard itself');
      }
    }
    await next();
  };
}
