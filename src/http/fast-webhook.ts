import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { AppError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { errorFor } from './middleware/errors.js';
import { requestIdFrom } from './middleware/request-context.js';
import { apiSecurityHeaders } from './middleware/security-headers.js';
import { parseWebhookPath, WEBHOOK_PATH, type WebhookRoute } from '../messaging/webhook-path.js';
import type { AcceptWebhook } from './webhook-core.js';

export { WEBHOOK_PATH };

export interface FastWebhookOptions {
  accept: AcceptWebhook;
  log: Logger;
  /** once per answered webhook, with its route label, status and duration (metrics) */
  onDone?: (route: string, status: number, seconds: number) => void;
}

/**
 * `POST /messaging-endpoint` answered before Koa: a burst of webhooks is the one load a web node
 * must absorb, and Koa's stack (context, middleware chain, router, helmet per request) cost more
 * CPU than the webhook's own work. The logic is the shared core (webhook-core.ts); this adds only
 * what every answer of the API carries: X-Request-Id, the API's security headers (computed once),
 * the error body of errors.ts, the access line when enabled and the request metrics.
 * It serves every webhook path (by-events suffixes, the secret segment: webhook-path.ts); log
 * lines name the path by its label, never the secret. Everything else (the handshake, other
 * methods, paths that are not the webhook's) goes on to `next`.
 */
export async function fastWebhook(options: FastWebhookOptions, next: RequestListener): Promise<RequestListener> {
  const { accept, log, onDone } = options;
  const security = (await apiSecurityHeaders()).flat();
  const accessLog = log.isLevelEnabled('http');

  const answer = (req: IncomingMessage, res: ServerResponse, route: WebhookRoute, requestId: string, started: bigint, status: number, body: object, extra?: Record<string, string>): void => {
    const text = JSON.stringify(body);
    // one writeHead with a flat list: cheaper than a setHeader call per header
    const headers = [...security, 'X-Request-Id', requestId, 'Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(text))];
    if (extra) for (const name in extra) headers.push(name, extra[name]!);
    res.writeHead(status, headers);
    res.end(text);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    onDone?.(route.label, status, seconds);
    if (accessLog) log.http('request', { requestId, method: 'POST', path: route.label, status, ms: Math.round(seconds * 1e4) / 10, ip: req.socket.remoteAddress });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, route: WebhookRoute): Promise<void> => {
    const started = process.hrtime.bigint();
    const incoming = req.headers['x-request-id'];
    const requestId = requestIdFrom(typeof incoming === 'string' ? incoming : undefined);
    let child: Logger | undefined;
    const requestLog = (): Logger => (child ??= log.child({ requestId }));
    try {
      const receipt = await accept(req, route, requestLog);
      answer(req, res, route, requestId, started, 200, receipt);
    } catch (thrown) {
      const err: AppError = errorFor(thrown, requestLog);
      // a body refused half-read would leave the rest of the upload in the connection: close it
      const extra: Record<string, string> = req.complete ? {} : { Connection: 'close' };
      if (err.retryAfter !== undefined) extra['Retry-After'] = String(err.retryAfter);
      if (!res.headersSent && !res.destroyed) answer(req, res, route, requestId, started, err.status, err.toBody(), extra);
    }
  };

  return (req, res) => {
    const route = req.method === 'POST' ? parseWebhookPath(req.url) : null;
    if (route !== null) void handle(req, res, route);
    else next(req, res);
  };
}
