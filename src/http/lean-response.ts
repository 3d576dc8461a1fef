import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { errorFor } from './middleware/errors.js';
import { apiSecurityHeaders } from './middleware/security-headers.js';
import { JsonText } from './json-text.js';
import { sendAnswer } from './lingering-close.js';

/** Once per answered request, with its method, route label, status and duration (metrics). */
export type OnLeanDone = (method: string, route: string, status: number, seconds: number) => void;

/** What the answer of a request handled in front of Koa needs to know about it. */
export interface LeanRequest {
  method: string;
  /** the route's label (never the raw URL: a client chooses it, and the webhook's may hold a secret) */
  route: string;
  requestId: string;
  started: bigint;
  /** the verified user, for the access line */
  userId?: string;
}

export interface LeanResponder {
  /** writes a JSON answer with the API's headers, then the metrics and the access line */
  answer(req: IncomingMessage, res: ServerResponse, at: LeanRequest, status: number, body: object, extra?: Record<string, string>): void;
  /** answers anything thrown with the one error body (errors.ts), as the Koa error handler does */
  fail(req: IncomingMessage, res: ServerResponse, at: LeanRequest, thrown: unknown, log: () => Logger): void;
}

/**
 * The answers of the lean handlers (fast-webhook.ts, fast-api.ts): what every answer of the API
 * carries, X-Request-Id, the API's security headers (computed once), the error body of errors.ts,
 * the access line when enabled and the request metrics, written in one writeHead with a flat
 * header list (cheaper than a setHeader call per header).
 */
export async function leanResponder(log: Logger, onDone?: OnLeanDone): Promise<LeanResponder> {
  const security = (await apiSecurityHeaders()).flat();
  const accessLog = log.isLevelEnabled('http');

  const answer: LeanResponder['answer'] = (req, res, at, status, body, extra) => {
    const text = body instanceof JsonText ? body.text : JSON.stringify(body);
    const headers = [...security, 'X-Request-Id', at.requestId, 'Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(text))];
    if (extra) for (const name in extra) headers.push(name, extra[name]!);
    // a refusal while the body still arrives closes lingering (lingering-close.ts)
    sendAnswer(req, res, status, headers, text);
    const seconds = Number(process.hrtime.bigint() - at.started) / 1e9;
    onDone?.(at.method, at.route, status, seconds);
    if (accessLog) {
      log.http('request', { requestId: at.requestId, method: at.method, path: at.route, status, ms: Math.round(seconds * 1e4) / 10, ip: req.socket.remoteAddress, userId: at.userId });
    }
  };

  const fail: LeanResponder['fail'] = (req, res, at, thrown, requestLog) => {
    const err: AppError = errorFor(thrown, requestLog);
    const extra = err.retryAfter !== undefined ? { 'Retry-After': String(err.retryAfter) } : undefined;
    if (!res.headersSent && !res.destroyed) answer(req, res, at, err.status, err.toBody(), extra);
  };

  return { answer, fail };
}
