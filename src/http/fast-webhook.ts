import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from '../observability/logger.js';
import { requestIdFrom } from './middleware/request-context.js';
import { parseWebhookPath, WEBHOOK_PATH, type WebhookRoute } from '../messaging/webhook-path.js';
import { leanResponder, type OnLeanDone } from './lean-response.js';
import type { AcceptWebhook } from './webhook-core.js';

export { WEBHOOK_PATH };

export interface FastWebhookOptions {
  accept: AcceptWebhook;
  log: Logger;
  /** once per answered webhook, with its method, route label, status and duration (metrics) */
  onDone?: OnLeanDone;
}

/**
 * `POST /messaging-endpoint` answered before Koa: a burst of webhooks is the one load a web node
 * must absorb, and Koa's stack (context, middleware chain, router, helmet per request) cost more
 * CPU than the webhook's own work. The logic is the shared core (webhook-core.ts); the answer is
 * written as every lean answer is (lean-response.ts: X-Request-Id, the API's security headers,
 * the error body of errors.ts, the access line when enabled and the request metrics).
 * It serves every webhook path (by-events suffixes, the secret segment: webhook-path.ts); log
 * lines name the path by its label, never the secret. Everything else (the handshake, other
 * methods, paths that are not the webhook's) goes on to `next`.
 */
export async function fastWebhook(options: FastWebhookOptions, next: RequestListener): Promise<RequestListener> {
  const { accept, log, onDone } = options;
  const { answer, fail } = await leanResponder(log, onDone);

  const handle = async (req: IncomingMessage, res: ServerResponse, route: WebhookRoute): Promise<void> => {
    const incoming = req.headers['x-request-id'];
    const at = { method: 'POST', route: route.label, requestId: requestIdFrom(typeof incoming === 'string' ? incoming : undefined), started: process.hrtime.bigint() };
    let child: Logger | undefined;
    const requestLog = (): Logger => (child ??= log.child({ requestId: at.requestId }));
    try {
      answer(req, res, at, 200, await accept(req, route, requestLog));
    } catch (thrown) {
      fail(req, res, at, thrown, requestLog);
    }
  };

  return (req, res) => {
    const route = req.method === 'POST' ? parseWebhookPath(req.url) : null;
    if (route !== null) void handle(req, res, route);
    else next(req, res);
  };
}
