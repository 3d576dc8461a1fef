import type { ApiHandler } from '../api-core.js';
import type { AppRouter } from '../context.js';
import { koaApi } from '../koa-api.js';

/** GET /profile (api-core.ts; the web role answers it in front of Koa: fast-api.ts). */
export function registerProfileRoute(router: AppRouter, handler: ApiHandler): void {
  router.get('/profile', koaApi(handler));
}
