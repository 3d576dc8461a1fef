import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import { loggablePath } from '../../messaging/webhook-path.js';
import type { Logger } from '../../observability/logger.js';
import type { AppContext } from '../context.js';

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-Id when sane, else a new one. */
export function requestIdFrom(incoming: string | undefined): string {
  return incoming !== undefined && INCOMING_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Gives every request an id (the caller's X-Request-Id when sane), a logger that stamps it on
 * every line, and one access-log line with method, route, status, duration and the user when
 * known (never bodies).
 */
export function requestContext(log: Logger, onFinish?: (ctx: AppContext, seconds: number) => void) {
  const accessLog = log.isLevelEnabled('http');
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const requestId = requestIdFrom(ctx.get('x-request-id'));
    ctx.state.requestId = requestId;
    // The child logger is made on first use: most requests log nothing but the access line.
    let child: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', {
      configurable: true,
      enumerable: true,
      get: () => (child ??= log.child({ requestId })),
      set: (value: Logger) => {
        child = value;
      },
    });
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      onFinish?.(ctx, seconds);
      if (accessLog) ctx.state.log.http('request', {
        method: ctx.method,
        // the webhook's path may hold its secret: logged by its label
        path: loggablePath(ctx.path),
        status: ctx.status,
        ms: Math.round(seconds * 1e4) / 10,
        ip: ctx.ip,
        userId: ctx.state.claims?.sub,
      });
    }
  };
}
