import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { AppError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { errorFor } from './middleware/errors.js';
import { requestIdFrom } from './middleware/request-context.js';
import { apiSecurityHeaders } from './middleware/security-headers.js';
import type { AcceptWebhook } from './webhook-core.js';

export const WEBHOOK_PATH = '/messaging-endpoint';

export interface FastWebhookOptions {
  accept: AcceptWebhook;
  log: Logger;
  /** once per answered webhook, with its status and duration (metrics) */
  onDone?: (status: number, seconds: number) => void;
}

/**
 * `POST /messaging-endpoint` answered before Koa: a burst of webhooks is the one load a web node
 * must absorb, and Koa's stack (context, middleware chain, router, helmet per request) cost more
 * CPU than the webhook's own work. The logic is the shared core (webhook-core.ts); this adds only
 * what every answer of the API carries: X-Request-Id, the API's security headers (computed once),
 * the error body of errors.ts, the access line when enabled and the request metrics.
 * Everything else (the handshake, other methods, `/messaging-endpoint/`) goes on to `next`.
 */
export async function fastWebhook(options: FastWebhookOptions, next: RequestListener): Promise<RequestListener> {
  const { accept, log, onDone } = options;
  const security = (await apiSecurityHeaders()).flat();
  const accessLog = log.isLevelEnabled('http');

  const answer = (req: IncomingMessage, res: ServerResponse, requestId: string, started: bigint, status: number, body: object, extra?: Record<string, string>): void => {
    const text = JSON.stringify(body);
    // one writeHead with a flat list: cheaper than a setHeader call per header
    const headers = [...security, 'X-Request-Id', requestId, 'Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(text))];
    if (extra) for (const name in extra) headers.push(name, extra[name]!);
    res.writeHead(status, headers);
    res.end(text);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    onDone?.(status, seconds);
    if (accessLog) log.http('request', { requestId, method: 'POST', path: WEBHOOK_PATH, status, ms: Math.round(seconds * 1e4) / 10, ip: req.socket.remoteAddress });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = process.hrtime.bigint();
    const incoming = req.headers['x-request-id'];
    const requestId = requestIdFrom(typeof incoming === 'string' ? incoming : undefined);
    let child: Logger | undefined;
    const requestLog = (): Logger => (child ??= log.child({ requestId }));
    try {
      const receipt = await accept(req, requestLog);
      answer(req, res, requestId, started, 200, receipt);
    } catch (thrown) {
      const err: AppError = errorFor(thrown, requestLog);
      // a body refused half-read would leave the rest of the upload in the connection: close it
      const extra: Record<string, string> = req.complete ? {} : { Connection: 'close' };
      if (err.retryAfter !== undefined) extra['Retry-After'] = String(err.retryAfter);
      if (!res.headersSent && !res.destroyed) answer(req, res, requestId, started, err.status, err.toBody(), extra);
    }
  };

  return (req, res) => {
    if (req.method === 'POST' && (req.url === WEBHOOK_PATH || req.url?.startsWith(WEBHOOK_PATH + '?'))) void handle(req, res);
    else next(req, res);
  };
}
