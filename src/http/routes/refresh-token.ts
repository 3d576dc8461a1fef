import type { ApiHandler } from '../api-core.js';
import type { AppRouter } from '../context.js';
import { koaApi } from '../koa-api.js';
import { jsonBody } from '../middleware/json-body.js';

/**
 * POST /refresh-token (api-core.ts; the web role answers it in front of Koa: fast-api.ts). The
 * bearer token is checked before the body is read, so a request without one is told so first.
 */
export function registerRefreshTokenRoute(router: AppRouter, handler: ApiHandler, bodyLimit: string): void {
  router.post('/refresh-token', koaApi(handler, jsonBody(bodyLimit)));
}
