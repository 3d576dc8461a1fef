import type { ApiHandler } from '../api-core.js';
import type { AppRouter } from '../context.js';
import { koaApi } from '../koa-api.js';
import { jsonBody } from '../middleware/json-body.js';

/** POST /register-pin (api-core.ts; the web role answers it in front of Koa: fast-api.ts). */
export function registerRegisterPinRoute(router: AppRouter, handler: ApiHandler, bodyLimit: string): void {
  router.post('/register-pin', koaApi(handler, jsonBody(bodyLimit)));
}
