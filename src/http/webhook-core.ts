import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.js';
import { WebhookAuth } from '../messaging/webhook-auth.js';
import { clientIp } from '../security/client-ip.js';
import { WebhookAdmission } from '../security/webhook-admission.js';
import type { StatusResult } from '../messaging/delivery.js';
import { normaliseWebhook, type IgnoreReason, type StatusUpdate } from '../messaging/inbound.js';
import type { Logger } from '../observability/logger.js';
import { createIntake } from '../queues/intake.js';
import type { WebhookRoute } from '../messaging/webhook-path.js';
import type { Services } from '../services.js';
import { JSON_TYPE, readBody } from './read-body.js';

export const WEBHOOK_BODY_LIMIT = 1024 * 1024;
/**
 * How much of an over-limit body is read and thrown away so the gateway hears an answer it
 * will not retry (Evolution retries a 413, or a connection closed under it, ten times). Past
 * this the connection is closed: nothing legitimate is that large.
 */
export const WEBHOOK_DRAIN_LIMIT = 64 * 1024 * 1024;

export type WebhookDropReason = 'too-large';
/** why a request was refused before its body was authenticated (429, or 413 past the drain limit) */
export type WebhookRefusal = 'concurrency' | 'unverified-bytes' | 'too-large';

export interface WebhookHooks {
  onRejected?: () => void;
  /** a request refused for what it would cost: too many in flight from its network, no room for its body */
  onRefused?: (reason: WebhookRefusal) => void;
  onIgnored?: (reason: IgnoreReason) => void;
  /** an authenticated body over the limit, thrown away (answered 200 so the gateway does not retry it) */
  onDropped?: (reason: WebhookDropReason) => void;
  /** a status update of one of our messages, recorded (or not: unknown, stale) */
  onStatus?: (update: StatusUpdate, result: StatusResult) => void;
  /** a chat message accepted, by the channel it came in on */
  onInbound?: (channel: string) => void;
  /** a message the gateway priced (Cloud API `pricing`), once per message, with the reply kind and recipient country it was sent with */
  onPriced?: (update: StatusUpdate & { pricing: NonNullable<StatusUpdate['pricing']> }, of: { kind: string; country: string }) => void;
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
 * The gateway's door, `POST /messaging-endpoint` (its Koa route: routes/messaging-endpoint.ts).
 * It does the least before answering: authenticate, read the exact bytes, parse, normalise (so
 * receipts and other noise never reach Redis), and add each text message as a job to the `inbound`
 * queue (queues/intake.ts; with INBOUND_PARTITIONS, the queue of the message id's partition). It
 * answers 200 only once every message is in Redis; a Redis failure propagates (503 NETWORK_ERROR: the gateway retries); 4xx only for requests
 * that can never succeed.
 *
 * A body costs nothing until something vouches for it (SECURITY.md, "Webhook bodies"): a request
 * whose head carries no credential that passes is answered 401 unread; a bearer, JWT or path
 * secret that passes lets the body be read; an HMAC signature lets it be read while it is
 * hashed, its bytes counted against the node's budget of unauthenticated bytes (429 when full),
 * and 401 at its end if the HMAC differs. At most WEBHOOK_IN_FLIGHT_PER_IP requests per IP group
 * at once (429), and the HTTP server's REQUEST_TIMEOUT_MS closes a body that stalls. A request
 * refused before its body is read is answered, then the rest of its body is discarded for a
 * bounded while before the connection closes (lingering-close.ts), so the client reads the answer.
 * An authenticated body over the limit (Evolution with `base64` on sends media inline) is read
 * to its end, thrown away and answered 200 `dropped: "too-large"`, counted and logged: a 413
 * would make Evolution send it nine more times, and it can never succeed. An unauthenticated one
 * never gets a 200. De-duplication beyond the job id and the matching happen in the worker.
 */
export function createWebhookAcceptor(services: Services, hooks: WebhookHooks = {}): AcceptWebhook {
  const { webhookAuth, queues, replicas, delivery, config, limits, health } = services;
  const admission = new WebhookAdmission(config.webhookLimits.inFlightPerIp, config.webhookLimits.unverifiedBytes, WEBHOOK_BODY_LIMIT);
  const authenticated = { drainTo: WEBHOOK_DRAIN_LIMIT };
  // with REDIS_WAIT_REPLICAS, "in Redis" means on the replicas too: a failover then loses no accepted message
  const intake = createIntake(queues, () => replicas.sync());

  const rejected = (): AppError => {
    hooks.onRejected?.();
    return new AppError('AUTHENTICATION_FAILED', 'Webhook signature or token invalid');
  };

  return async (req, route, log) => {
    const type = req.headers['content-type'];
    if (type === undefined || !JSON_TYPE.test(type)) throw new AppError('VALIDATION_ERROR', 'Content-Type must be application/json');
    const group = limits.group(clientIp(req.headers, req.socket.remoteAddress, config.trustProxy));
    if (!admission.enter(group)) {
      hooks.onRefused?.('concurrency');
      throw new AppError('RATE_LIMITED', 'Too many webhook requests in flight from this network; retry later', { retryAfter: 1 });
    }
    try {
      const signature = req.headers['x-hub-signature-256'];
      const verdict = webhookAuth.beforeBody({
        signature: typeof signature === 'string' ? signature : undefined,
        authorization: req.headers.authorization || undefined,
        pathSecret: route.secretCandidate,
      });
      // nothing in the head can pass: refused unread (answered, then a lingering close: lingering-close.ts)
      if (verdict === false) throw rejected();
      let raw: Buffer | null;
      if (verdict === true) raw = await readBody(req, WEBHOOK_BODY_LIMIT, authenticated);
      else {
        // signed: hashed as it arrives, its bytes counted against the node's budget until it ends
        const hasher = webhookAuth.bodyHasher();
        try {
          raw = await readBody(req, WEBHOOK_BODY_LIMIT, { hash: hasher, budget: admission, owner: group, drainTo: WEBHOOK_DRAIN_LIMIT });
        } catch (err) {
          if (err instanceof AppError && err.code !== 'VALIDATION_ERROR') hooks.onRefused?.(err.code === 'RATE_LIMITED' ? 'unverified-bytes' : 'too-large');
          throw err;
        }
        if (!WebhookAuth.bodyMatches(hasher, verdict)) throw rejected();
      }
      // its network is a gateway's: it keeps a share of the byte budget strangers can't take
      admission.vouched(group);
      if (raw === null) {
        hooks.onDropped?.('too-large');
        log().warn('webhook body over the limit dropped', { limit: WEBHOOK_BODY_LIMIT, declared: Number(req.headers['content-length']) || undefined });
        return { received: true, accepted: 0, ignored: 0, dropped: 'too-large' };
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
      // a number's health: recorded before the 200, so a Redis failure has the gateway send it again
      for (const report of normalised.health) {
        for (const s of await health.report(report)) {
          log().warn(s.healthy ? 'channel back in rotation' : 'channel out of rotation', { channel: s.channel, reason: s.reason });
        }
      }
      // statuses of our messages: recorded before the 200 (a Redis failure is a 503, and the gateway sends them again)
      if (normalised.statuses.length > 0) {
        const results = await Promise.all(normalised.statuses.map((u) => delivery.status(u)));
        for (const [i, u] of normalised.statuses.entries()) hooks.onStatus?.(u, results[i]!);
        // what replies cost: each priced message once, by the kind and country it was sent with
        for (const u of normalised.statuses) {
          if (u.pricing === undefined || !hooks.onPriced) continue;
          const of = await delivery.priced(u);
          if (of.first) hooks.onPriced({ ...u, pricing: u.pricing }, of);
        }
      }

      const { messages } = normalised;
      const receivedAt = Date.now();
      if (messages.length === 1) await intake.add(messages[0]!, receivedAt);
      else if (messages.length > 1) await Promise.all(messages.map((message) => intake.add(message, receivedAt)));
      for (const m of messages) hooks.onInbound?.(m.channel ?? config.defaultChannel);
      return { received: true, accepted: messages.length, ignored: normalised.ignored.length };
    } finally {
      admission.leave(group);
    }
  };
}
