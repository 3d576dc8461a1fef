import { randomBytes } from 'node:crypto';
import getRawBody from 'raw-body';
import { AppError } from '../../errors.js';
import { normaliseWebhook, type IgnoreReason } from '../../messaging/inbound.js';
import type { Services } from '../../services.js';
import type { AppContext, AppRouter } from '../context.js';

export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

export interface WebhookHooks {
  onRejected?: () => void;
  onIgnored?: (reason: IgnoreReason) => void;
}

/**
 * The gateway's door. It does the least before answering: read the exact bytes, authenticate
 * them, parse, normalise, and put each text message on the `inbound` queue. It answers 200 only
 * once every job is in Redis, 503 when Redis can't take them (the gateway retries), and 4xx only
 * for requests that can never succeed. De-duplication and matching happen in the worker.
 */
export function registerMessagingEndpointRoute(router: AppRouter, services: Services, hooks: WebhookHooks = {}): void {
  const { webhookAuth, queues, config } = services;

  // WhatsApp Cloud API subscription handshake.
  router.get('/messaging-endpoint', (ctx) => {
    const mode = ctx.query['hub.mode'];
    const token = ctx.query['hub.verify_token'];
    const challenge = ctx.query['hub.challenge'];
    if (
      config.webhookVerifyToken !== undefined &&
      mode === 'subscribe' &&
      token === config.webhookVerifyToken &&
      typeof challenge === 'string'
    ) {
      ctx.type = 'text/plain';
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
    const receivedAt = Date.now();
    await Promise.all(
      normalised.messages.map((message) =>
        queues.inbound.add(
          'message',
          { message, nonce: randomBytes(9).toString('base64url'), receivedAt },
          // a repeat delivery while the first job is kept is dropped here; later ones by the worker
          { jobId: `m${message.id}` },
        ),
      ),
    );
    ctx.body = { received: true, accepted: normalised.messages.length, ignored: normalised.ignored.length };
  });
}
