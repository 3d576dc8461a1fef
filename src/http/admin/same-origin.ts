import type { Next } from 'koa';
import { AppError } from '../../errors.js';
import type { AppContext } from '../context.js';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

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
      const site = ctx.get('sec-fetch-site');
      const origin = ctx.get('origin');
      let foreignOrigin = false;
      if (origin !== '') {
        try {
          foreignOrigin = new URL(origin).host !== ctx.host;
        } catch {
          foreignOrigin = true;
        }
      }
      const hasBody = ctx.request.length > 0 || ctx.get('transfer-encoding') !== '';
      if ((site !== '' && site !== 'same-origin' && site !== 'none') || foreignOrigin || (hasBody && !ctx.is('application/json'))) {
        throw new AppError('FORBIDDEN', 'Dashboard actions must come from the dashboard itself');
      }
    }
    await next();
  };
}
