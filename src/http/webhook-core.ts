import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.js';
import { normaliseWebhook, type IgnoreReason } from '../messaging/inbound.js';
import { createIntake } from '../messaging/intake.js';
import type { Logger } from '../observability/logger.js';
import type { Services } from '../services.js';

export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

export interface WebhookHooks {
  onRejected?: () => void;
  onIgnored?: (reason: IgnoreReason) => void;
}

/** The 200 body of an accepted webhook. */
export interface WebhookReceipt {
  received: true;
  accepted: number;
  ignored: number;
}

/** Reads one webhook request and answers it: a receipt, or a thrown AppError. */
export type AcceptWebhook = (req: IncomingMessage, log: () => Logger) => Promise<WebhookReceipt>;

/** `application/json` or any `<type>/<subtype>+json`, parameters allowed (what Koa's `ctx.is` accepts). */
const JSON_TYPE = /^(?:application\/json|[\w.!#$%&'*^`|~-]+\/[\w.!#$%&'*^`|~-]+\+json)\s*(?:;|$)/i;

/**
 * The exact bytes of the body, up to the limit: 413 as soon as the declared or received length
 * passes it (the rest is left unread; the caller closes the connection).
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(new AppError('PAYLOAD_TOO_LARGE'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        done();
        req.pause();
        reject(new AppError('PAYLOAD_TOO_LARGE'));
      } else chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    // the client went away mid-body: nobody is left to answer, nothing was accepted
    const onClose = (): void => {
      done();
      reject(new AppError('VALIDATION_ERROR', 'Request body incomplete'));
    };
    const done = (): void => {
      req.off('data', onData).off('end', onEnd).off('aborted', onClose).off('error', onClose);
    };
    req.on('data', onData).on('end', onEnd).on('aborted', onClose).on('error', onClose);
  });
}

/**
 * The gateway's door, the one implementation of `POST /messaging-endpoint` (served by the lean
 * handler in fast-webhook.ts in front of Koa, and by the Koa route for any app without it). It
 * does the least before answering: read the exact bytes, authenticate them, parse, normalise (so
 * receipts and other noise never reach Redis), and store each text message in the intake stream
 * (batched per event-loop turn, see intake.ts; the worker's pump moves them onto the `inbound`
 * queue). It answers 200 only once every message is in Redis;
 * a Redis failure propagates (503 NETWORK_ERROR: the gateway retries); 4xx only for requests
 * that can never succeed. De-duplication beyond the job id and the matching happen in the worker.
 */
export function createWebhookAcceptor(services: Services, hooks: WebhookHooks = {}): AcceptWebhook {
  const { webhookAuth, scripts, keys } = services;
  const stream = keys.inboundIntake();
  const intake = createIntake((entries) => scripts.run('intake-push', [stream, ...entries]));

  return async (req, log) => {
    const type = req.headers['content-type'];
    if (type === undefined || !JSON_TYPE.test(type)) throw new AppError('VALIDATION_ERROR', 'Content-Type must be application/json');
    const raw = await readBody(req, WEBHOOK_BODY_LIMIT);
    const signature = req.headers['x-hub-signature-256'];
    if (!webhookAuth.verify(raw, typeof signature === 'string' ? signature : undefined, req.headers.authorization || undefined)) {
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
      log().debug('webhook event ignored', { reason });
    }
    for (const reason of normalised.deliveryFailures) log().warn('outbound message failed at the gateway', { reason });

    const { messages } = normalised;
    const receivedAt = Date.now();
    if (messages.length === 1) await intake.add(messages[0]!, receivedAt);
    else if (messages.length > 1) await Promise.all(messages.map((message) => intake.add(message, receivedAt)));
    return { received: true, accepted: messages.length, ignored: normalised.ignored.length };
  };
}
