import type { ApiHandler } from '../api-core.js';
import type { AppRouter } from '../context.js';
import { koaApi } from '../koa-api.js';
import { jsonBody } from '../middleware/json-body.js';

/** POST /check-login (api-core.ts; the web role answers it in front of Koa: fast-api.ts). */
export function registerCheckLoginRoute(router: AppRouter, handler: ApiHandler, bodyLimit: string): void {
  router.post('/check-login', koaApi(handler, jsonBody(bodyLimit)));
}
