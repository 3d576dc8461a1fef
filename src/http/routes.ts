import Router from '@koa/router';
import type { Services } from '../services.js';
import { addAdminRoutes } from './admin-api/routes.js';
import type { AppRouter, AppState } from './context.js';
import { accessTokenOfAnyAge, authenticate } from './middleware/authenticate.js';
import { jsonBody } from './middleware/json-body.js';
import { deleteOwnAccount, exportOwnAccount } from './routes/account.js';
import { checkLogin } from './routes/check-login.js';
import { docsAssets, docsPage, openApiJson } from './routes/docs.js';
import { health } from './routes/health.js';
import { jwks } from './routes/jwks.js';
import { logout } from './routes/logout.js';
import { messageStatus } from './routes/messages.js';
import { webhook, webhookHandshake } from './routes/messaging-endpoint.js';
import { profile } from './routes/profile.js';
import { refreshToken } from './routes/refresh-token.js';
import { registerPin } from './routes/register-pin.js';
import { endAllSessions, endSession, listSessions } from './routes/sessions.js';
import { sendMessage } from './routes/send-message.js';
import { registerAssets } from './static-assets.js';
import type { AcceptWebhook } from './webhook-core.js';

/** The API's JSON bodies (the webhook reads its own, up to WEBHOOK_BODY_LIMIT). */
export const API_BODY_LIMIT = '16kb';

/**
 * Every route of the service, each with its whole middleware chain; the behaviour of each is in
 * the file its handler comes from (routes/). Before the router, for every request (app.ts):
 * request id and access line, lingering close, the error body, the OpenID provider under /oidc,
 * security headers, CORS, the operator pages (/metrics, /admin/queues). `json` is koa-bodyparser
 * in strict mode (middleware/json-body.ts); `user` is an open session's access token.
 * Each route is described in src/openapi/paths.ts, and test/openapi/routes.test.ts compares the
 * two. The login page's routes are handed in (`pages`: src/demo/routes.ts, above http/ in the
 * layers) and added last.
 */
export function createRouter(services: Services, accept: AcceptWebhook, pages?: (router: AppRouter) => void): Router<AppState> {
  const router = new Router<AppState>();
  const json = jsonBody(API_BODY_LIMIT);
  const user = authenticate(services.sessions);
  const gateway = webhook(accept);

  router.get('/health', health(services));
  router.get('/.well-known/jwks.json', jwks(services));

  // the sign-in an app runs: register, poll, then its session
  router.post('/register-pin', json, registerPin(services));
  router.post('/check-login', json, checkLogin(services));
  router.get('/profile', profile(services)); // checks its own token: one round trip with the user
  router.post('/refresh-token', accessTokenOfAnyAge(services.tokens), json, refreshToken(services));
  router.post('/logout', user, json, logout(services));
  router.get('/sessions', user, listSessions(services));
  router.delete('/sessions/:id', user, endSession(services));
  router.delete('/sessions', user, endAllSessions(services));
  // the person's own data: a copy of it, and its erasure (docs/accounts.md)
  router.get('/account/export', user, exportOwnAccount(services));
  router.delete('/account', user, deleteOwnAccount(services));

  router.post('/send-message', user, json, sendMessage(services));
  router.get('/messages/:id', user, messageStatus(services));

  // the gateway's door: no body parser (the acceptor reads and authenticates the bytes itself)
  router.get('/messaging-endpoint', webhookHandshake(services.config));
  router.post('/messaging-endpoint', gateway);
  router.post('/messaging-endpoint/:first', gateway);
  router.post('/messaging-endpoint/:first/:second', gateway);

  // the operators' API (admin-api/routes.ts): behind an admin's session or an API key
  addAdminRoutes(router, services);

  router.get('/openapi.json', openApiJson());
  router.get('/docs', docsPage);
  registerAssets(router, '/docs', docsAssets());

  pages?.(router);
  return router;
}
