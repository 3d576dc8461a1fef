import getRawBody from 'raw-body';
import { AppError } from '../../errors.js';
import { normaliseWebhook, type IgnoreReason } from '../../messaging/inbound.js';
import { createIntake } from '../../messaging/intake.js';
import { sameSecret } from '../../messaging/webhook-auth.js';
import type { Services } from '../../services.js';
import type { AppContext, AppRouter } from '../context.js';

export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

export interface WebhookHooks {
  onRejected?: () => void;
  onIgnored?: (reason: IgnoreReason) => void;
}

/** What the handshake echoes: Meta sends digits; anything odd is not echoed back. */
const CHALLENGE = /^[\x21-\x7e]{1,256}$/;

/**
 * The gateway's door. It does the least before answering: read the exact bytes, authenticate
 * them, parse, normalise (so receipts and other noise never reach Redis), and put each text
 * message on the `inbound` queue (batched per event-loop turn, see intake.ts). It answers 200
 * only once every job is in Redis, 503 when Redis can't take them (the gateway retries), and 4xx
 * only for requests that can never succeed. De-duplication beyond the job id and the matching
 * happen in the worker.
 */
export function registerMessagingEndpointRoute(router: AppRouter, services: Services, hooks: WebhookHooks = {}): void {
  const { webhookAuth, queues, config } = services;
  const intake = createIntake(queues.inbound);

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

  router.post('/messaging-endpoint', async (ctx: AppContext) => {
    if (!ctx.is('application/json', '+json')) throw new AppError('VALIDATION_ERROR', 'Content-Type must be application/json');
    const raw = await getRawBody(ctx.req, { limit: WEBHOOK_BODY_LIMIT, length: ctx.get('content-length') || undefined });
    if (!webhookAuth.verify(raw, ctx.get('x-hub-signature-256') || undefined, ctx.get('authorization') || undefined)) {
      hooks.onRejected?.();
      throw new AppError('AUTHENTICATION_FAILED', 'Webhook signature or token invalid');
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new AppError('VALIDATION_ERROR', 'Malformed JSON');
    }
    const normalised = normaliseWebhook(body);
    if (normalised.kind === 'invalid') throw new AppError('VALIDATION_ERROR', normalised.reason);
    for (const reason of normalised.ignored) {
      hooks.onIgnored?.(reason);
      ctx.state.log.debug('webhook event ignored', { reason });
    }
    for (const reason of normalised.deliveryFailures) ctx.state.log.warn('outbound message failed at the gateway', { reason });

    const receivedAt = Date.now();
    await Promise.all(normalised.messages.map((message) => intake.add(message, receivedAt)));
    ctx.body = { received: true, accepted: normalised.messages.length, ignored: normalised.ignored.length };
  });
}
