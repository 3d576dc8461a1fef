import type { Middleware } from 'koa';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { sameSecret } from '../../messaging/webhook-auth.js';
import { oneSlash, parseWebhookPath, WEBHOOK_PATH } from '../../messaging/webhook-path.js';
import type { AppContext, AppState } from '../context.js';
import type { AcceptWebhook } from '../webhook-core.js';

/** What the handshake echoes: Meta sends digits; anything odd is not echoed back. */
const CHALLENGE = /^[\x21-\x7e]{1,256}$/;

/** GET /messaging-endpoint: the WhatsApp Cloud API's subscription handshake (WEBHOOK_VERIFY_TOKEN). */
export function webhookHandshake(config: Pick<Config, 'webhookVerifyToken'>) {
  return (ctx: AppContext): void => {
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
  };
}

/**
 * POST /messaging-endpoint[/:secret][/<event>]: the gateway's webhook, on every path
 * webhook-path.ts takes (by-events suffix, secret segment). No body parser runs before it: the
 * acceptor (webhook-core.ts) reads the exact bytes itself, hashing them for the HMAC as they
 * arrive, and answers a refusal before the body is read (the lingering close then drains it).
 */
export function webhook(accept: AcceptWebhook) {
  return async (ctx: AppContext): Promise<void> => {
    const route = parseWebhookPath(ctx.path);
    if (route === null) throw new AppError('NOT_FOUND');
    ctx.body = await accept(ctx.req, route, () => ctx.state.log);
  };
}

/**
 * Before the router: a webhook path with doubled slashes (a by-events URL built on a base URL
 * ending in `/`, which Evolution never retries after a 404) routed as its one-slash form.
 */
export const webhookSlashes: Middleware<AppState> = (ctx, next) => {
  if (ctx.method === 'POST' && ctx.path.startsWith(`${WEBHOOK_PATH}/`)) ctx.path = oneSlash(ctx.path);
  return next();
};
