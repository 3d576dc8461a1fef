import Koa from 'koa';
import type { Services } from '../services.js';
import type { AppState, AppContext, AppRouter } from './context.js';
import { allowedHosts } from './middleware/allowed-hosts.js';
import { corsAllowlist } from './middleware/cors.js';
import { errorHandler } from './middleware/errors.js';
import { lingeringClose } from './lingering-close.js';
import { requestContext } from './middleware/request-context.js';
import { securityHeaders } from './middleware/security-headers.js';
import { webhookSlashes } from './routes/messaging-endpoint.js';
import { createRouter } from './routes.js';
import { createWebhookAcceptor, type WebhookHooks } from './webhook-core.js';

export interface AppHooks {
  webhook?: WebhookHooks;
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

/** The Koa application: what every request goes through, then the route table (routes.ts). */
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
  // before anything that trusts same-origin: the OpenID pages, the dashboard, the API (DNS rebinding)
  const hosts = allowedHosts(services.config.allowedHosts);
  if (hosts) app.use(hosts);
  if (hooks.oidc) app.use(hooks.oidc);
  // Headers are set before anything can fail, so error responses carry them too.
  app.use(securityHeaders());
  const cors = corsAllowlist(services.config.corsOrigins);
  if (cors) app.use(cors);
  for (const mw of hooks.before ?? []) app.use(mw);

  app.use(webhookSlashes);
  const router = createRouter(services, createWebhookAcceptor(services, hooks.webhook), hooks.pages);
  app.use(router.routes());
  // not `throw: true`: the thrown error would lose the Allow header (errors.ts answers instead)
  app.use(router.allowedMethods());
  return app;
}
