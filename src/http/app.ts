import Koa from 'koa';
import Router from '@koa/router';
import type { Services } from '../services.js';
import type { AppState, AppContext, AppRouter } from './context.js';
import { corsAllowlist } from './middleware/cors.js';
import { errorHandler } from './middleware/errors.js';
import { lingeringClose } from './lingering-close.js';
import { requestContext } from './middleware/request-context.js';
import { securityHeaders } from './middleware/security-headers.js';
import { registerDocsRoutes } from './routes/docs.js';
import { registerCheckLoginRoute } from './routes/check-login.js';
import { registerHealthRoute } from './routes/health.js';
import { registerJwksRoute } from './routes/jwks.js';
import { registerLogoutRoute } from './routes/logout.js';
import { registerMessagesRoute } from './routes/messages.js';
import { registerMessagingEndpointRoute, webhookSlashes } from './routes/messaging-endpoint.js';
import { registerProfileRoute } from './routes/profile.js';
import { registerRefreshTokenRoute } from './routes/refresh-token.js';
import { registerRegisterPinRoute } from './routes/register-pin.js';
import { registerSendMessageRoute } from './routes/send-message.js';
import { registerSessionsRoutes } from './routes/sessions.js';
import { createWebhookAcceptor, type AcceptWebhook, type WebhookHooks } from './webhook-core.js';
import { apiHandlers, type ApiHandler, type ApiRoute } from './api-core.js';

/** the API's JSON bodies (the webhook has its own limit) */
export const API_BODY_BYTES = 16 * 1024;
export const API_BODY_LIMIT = `${API_BODY_BYTES}b`;

export interface AppHooks {
  webhook?: WebhookHooks;
  /** the webhook core to share with the lean handler in front of Koa (made from `webhook` when absent) */
  acceptWebhook?: AcceptWebhook;
  /** the polled endpoints' handlers to share with the lean handler in front of Koa (made here when absent) */
  api?: Record<ApiRoute, ApiHandler>;
  /** called once per request with its duration (metrics) */
  onRequest?: (ctx: AppContext, seconds: number) => void;
  /** extra middleware mounted before the API routes (dashboard, metrics, headers) */
  before?: Koa.Middleware<AppState>[];
  /** the OpenID provider under its own path (before the API's headers: its pages set their own) */
  oidc?: Koa.Middleware<AppState>;
  /**
   * Routes added after the API's on the same router: the login page and its assets, which the
   * web role hands in (src/demo/routes.ts) since pages sit above http/ in the layers.
   */
  pages?: (router: AppRouter) => void;
}

/** The Koa application: request context, one error handler, the API's routes. */
export function createApp(services: Services, hooks: AppHooks = {}): Koa<AppState> {
  const app = new Koa<AppState>();
  if (services.config.trustProxy) {
    // Behind Heroku's router or a load balancer: the last X-Forwarded-For hop is the client.
    app.proxy = true;
    app.maxIpsCount = 1;
  }
  app.silent = true;
  app.use(requestContext(services.log, hooks.onRequest));
  // outside the error handler: it writes the answers to requests whose body is still arriving
  app.use(lingeringClose());
  app.use(errorHandler());
  if (hooks.oidc) app.use(hooks.oidc);
  // Headers are set before anything can fail, so error responses carry them too.
  app.use(securityHeaders());
  const cors = corsAllowlist(services.config.corsOrigins);
  if (cors) app.use(cors);
  for (const mw of hooks.before ?? []) app.use(mw);

  app.use(webhookSlashes);
  const router = createRouter(services, hooks.acceptWebhook ?? createWebhookAcceptor(services, hooks.webhook), hooks);
  app.use(router.routes());
  // not `throw: true`: the thrown error would lose the Allow header (errors.ts answers instead)
  app.use(router.allowedMethods());
  return app;
}

/**
 * Every route of the API, and the pages handed in. Each one is described in
 * src/openapi/paths.ts, and test/openapi/routes.test.ts compares this router's routes with that list.
 */
export function createRouter(services: Services, acceptWebhook: AcceptWebhook, parts: Pick<AppHooks, 'api' | 'pages'> = {}): Router<AppState> {
  const api = parts.api ?? apiHandlers(services);
  const router = new Router<AppState>();
  registerHealthRoute(router, services);
  registerJwksRoute(router, services);
  registerRegisterPinRoute(router, api.registerPin, API_BODY_LIMIT);
  registerCheckLoginRoute(router, api.checkLogin, API_BODY_LIMIT);
  registerRefreshTokenRoute(router, api.refreshToken, API_BODY_LIMIT);
  registerProfileRoute(router, api.profile);
  registerLogoutRoute(router, services, API_BODY_LIMIT);
  registerSendMessageRoute(router, services, API_BODY_LIMIT);
  registerSessionsRoutes(router, services);
  registerMessagesRoute(router, services);
  registerMessagingEndpointRoute(router, services, acceptWebhook);
  registerDocsRoutes(router);
  parts.pages?.(router);
  return router;
}
