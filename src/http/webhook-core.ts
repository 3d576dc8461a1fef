import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.js';
import type { StatusResult } from '../messaging/delivery.js';
import { normaliseWebhook, type IgnoreReason, type StatusUpdate } from '../messaging/inbound.js';
import { createPartitionedIntake } from '../messaging/intake.js';
import type { Logger } from '../observability/logger.js';
import type { WebhookRoute } from '../messaging/webhook-path.js';
import type { Services } from '../services.js';
import { JSON_TYPE, readBody, TooLarge } from './read-body.js';

export const WEBHOOK_BODY_LIMIT = 1024 * 1024;
/**
 * How much of an over-limit body is read and thrown away so the gateway hears an answer it
 * will not retry (Evolution retries a 413, or a connection closed under it, ten times). Past
 * this the connection is closed: nothing legitimate is that large.
 */
export const WEBHOOK_DRAIN_LIMIT = 64 * 1024 * 1024;

export type WebhookDropReason = 'too-large';

export interface WebhookHooks {
  onRejected?: () => void;
  onIgnored?: (reason: IgnoreReason) => void;
  /** a body dropped unread (answered 200 so the gateway does not retry it) */
  onDropped?: (reason: WebhookDropReason) => void;
  /** a status update of one of our messages, recorded (or not: unknown, stale) */
  onStatus?: (update: StatusUpdate, result: StatusResult) => void;
}

/** The 200 body of an accepted webhook. */
export interface WebhookReceipt {
  received: true;
  accepted: number;
  ignored: number;
  /** set when the body was dropped unread */
  dropped?: WebhookDropReason;
}

/** Reads one webhook request and answers it: a receipt, or a thrown AppError. */
export type AcceptWebhook = (req: IncomingMessage, route: WebhookRoute, log: () => Logger) => Promise<WebhookReceipt>;

/**
 * Reads the rest of an over-limit body and throws it away, so the answer reaches a gateway that
 * is still sending; past WEBHOOK_DRAIN_LIMIT (or if the client goes away) it gives up, and the
 * caller closes the connection (PAYLOAD_TOO_LARGE).
 */
function drain(req: IncomingMessage): Promise<void> {
  if (req.complete) return Promise.resolve();
  return new Promise((resolve, reject) => {
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > WEBHOOK_DRAIN_LIMIT) {
        done();
        req.pause();
        reject(new AppError('PAYLOAD_TOO_LARGE'));
      }
    };
    const onEnd = (): void => {
      done();
      resolve();
    };
    const onClose = (): void => {
      done();
      reject(new AppError('PAYLOAD_TOO_LARGE'));
    };
    const done = (): void => {
      req.off('data', onData).off('end', onEnd).off('aborted', onClose).off('error', onClose);
    };
    req.on('data', onData).on('end', onEnd).on('aborted', onClose).on('error', onClose);
    req.resume();
  });
}

/**
 * The gateway's door, the one implementation of `POST /messaging-endpoint` (served by the lean
 * handler in fast-webhook.ts in front of Koa, and by the Koa route for any app without it). It
 * does the least before answering: read the exact bytes, authenticate them, parse, normalise (so
 * receipts and other noise never reach Redis), and store each text message in the intake stream
 * (batched per event-loop turn, see intake.ts; the worker's pump moves them onto the `inbound`
 * queue; with INBOUND_PARTITIONS, the stream and queue of the message id's partition). It
 * answers 200 only once every message is in Redis; a Redis failure propagates (503 NETWORK_ERROR: the gateway retries); 4xx only for requests
 * that can never succeed. A body over the limit (Evolution with `base64` on sends media inline)
 * is read to its end, thrown away and answered 200 `dropped: "too-large"`, counted and logged:
 * a 413 would make Evolution send it nine more times, and it can never succeed. De-duplication
 * beyond the job id and the matching happen in the worker.
 */
export function createWebhookAcceptor(services: Services, hooks: WebhookHooks = {}): AcceptWebhook {
  const { webhookAuth, scripts, keys, replicas, delivery, config } = services;
  // with REDIS_WAIT_REPLICAS, "in Redis" means on the replicas too: a failover then loses no accepted message
  const intake = createPartitionedIntake(config.inboundPartitions, (k) => async (entries) => {
    await scripts.run('intake-push', [keys.inboundIntake(k), ...entries]);
    await replicas.sync();
  });

  return async (req, route, log) => {
    const type = req.headers['content-type'];
    if (type === undefined || !JSON_TYPE.test(type)) throw new AppError('VALIDATION_ERROR', 'Content-Type must be application/json');
    let raw: Buffer;
    try {
      raw = await readBody(req, WEBHOOK_BODY_LIMIT);
    } catch (err) {
      if (!(err instanceof TooLarge)) throw err;
      await drain(req);
      hooks.onDropped?.('too-large');
      log().warn('webhook body over the limit dropped', { limit: WEBHOOK_BODY_LIMIT, declared: Number(req.headers['content-length']) || undefined });
      return { received: true, accepted: 0, ignored: 0, dropped: 'too-large' };
    }
    const signature = req.headers['x-hub-signature-256'];
    const credentials = {
      signature: typeof signature === 'string' ? signature : undefined,
      authorization: req.headers.authorization || undefined,
      pathSecret: route.secretCandidate,
    };
    if (!webhookAuth.verify(raw, credentials)) {
      hooks.onRejected?.();
      throw new AppError('AUTHENTICATION_FAILED', 'Webhook signature or token invalid');
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new AppError('VALIDATION_ERROR', 'Malformed JSON');
    }
    const normalised = normaliseWebhook(body, route.event);
    if (normalised.kind === 'invalid') throw new AppError('VALIDATION_ERROR', normalised.reason);
    for (const reason of normalised.ignored) {
      hooks.onIgnored?.(reason);
      log().debug('webhook event ignored', { reason });
    }
    for (const reason of normalised.deliveryFailures) log().warn('outbound message failed at the gateway', { reason });
    // statuses of our messages: recorded before the 200 (a Redis failure is a 503, and the gateway sends them again)
    if (normalised.statuses.length > 0) {
      const results = await Promise.all(normalised.statuses.map((u) => delivery.status(u)));
      normalised.statuses.forEach((u, i) => hooks.onStatus?.(u, results[i]!));
    }

    const { messages } = normalised;
    const receivedAt = Date.now();
    if (messages.length === 1) await intake.add(messages[0]!, receivedAt);
    else if (messages.length > 1) await Promise.all(messages.map((message) => intake.add(message, receivedAt)));
    return { received: true, accepted: messages.length, ignored: normalised.ignored.length };
  };
}
