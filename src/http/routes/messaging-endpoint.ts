import { AppError } from '../../errors.js';
import { sameSecret } from '../../messaging/webhook-auth.js';
import { oneSlash, parseWebhookPath, WEBHOOK_PATH } from '../../messaging/webhook-path.js';
import type { Services } from '../../services.js';
import type { Middleware } from 'koa';
import type { AppContext, AppRouter, AppState } from '../context.js';
import type { AcceptWebhook } from '../webhook-core.js';

/** What the handshake echoes: Meta sends digits; anything odd is not echoed back. */
const CHALLENGE = /^[\x21-\x7e]{1,256}$/;

/** The gateway's door: the Cloud API handshake, and webhooks handed to the core (webhook-core.ts). */
export function registerMessagingEndpointRoute(router: AppRouter, services: Services, accept: AcceptWebhook): void {
  const { config } = services;

  // WhatsApp Cloud API subscription handshake.
  router.get('/messaging-endpoint', (ctx) => {
    const { 'hub.mode': mode, 'hub.verify_token': token, 'hub.challenge': challenge } = ctx.query;
    if (
      config.webhookVerifyToken !== undefined &&
      mode === 'subscribe' &&
      typeof token === 'string' &&
      sameSecret(token, config.webhookVerifyToken) &&
      typeof challenge === 'string' &&
      CHALLENGE.test(challenge)
    ) {
      ctx.type = 'text/plain';
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.body = challenge;
      return;
    }
    throw new AppError('FORBIDDEN', 'Verification token mismatch');
  });

  // Served by the lean handler in front of Koa in the web role (fast-webhook.ts); the same core
  // here, on the same paths (by-events suffix, secret segment: see webhook-path.ts).
  const post = async (ctx: AppContext): Promise<void> => {
    const route = parseWebhookPath(ctx.path);
    if (route === null) throw new AppError('NOT_FOUND');
    ctx.body = await accept(ctx.req, route, () => ctx.state.log);
  };
  router.post('/messaging-endpoint', post);
  router.post('/messaging-endpoint/:first', post);
  router.post('/messaging-endpoint/:first/:second', post);
}

/**
 * For the Koa routes: a webhook path with doubled slashes (a by-events URL built on a base URL
 * ending in `/`) routed as its one-slash form, as the lean handler takes it (webhook-path.ts).
 */
export const webhookSlashes: Middleware<AppState> = (ctx, next) => {
  if (ctx.method === 'POST' && ctx.path.startsWith(WEBHOOK_PATH + '/')) ctx.path = oneSlash(ctx.path);
  return next();
};
