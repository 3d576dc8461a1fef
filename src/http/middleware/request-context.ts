import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import { loggablePath } from '../../messaging/webhook-path.js';
import type { Logger } from '../../observability/logger.js';
import type { TokenClaims } from '../../auth/tokens.js';
import type { AppContext, AppState } from '../context.js';

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-Id when sane, else a new one. */
export function requestIdFrom(incoming: string | undefined): string {
  return incoming !== undefined && INCOMING_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * A request's `ctx.state`. Its logger is made on first use (most requests log nothing but the
 * access line) and stamps the user once the token is verified; an accessor on a class, not a
 * property defined on each request's object.
 */
class RequestState implements AppState {
  claims?: TokenClaims;
  private made: Logger | undefined;
  private madeFor: string | undefined;

  constructor(
    private readonly base: Logger,
    readonly requestId: string,
  ) {}

  get log(): Logger {
    const userId = this.claims?.sub;
    if (this.made === undefined || this.madeFor !== userId) {
      this.made = this.base.child(userId === undefined ? { requestId: this.requestId } : { requestId: this.requestId, userId });
      this.madeFor = userId;
    }
    return this.made;
  }
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
    ctx.state = new RequestState(log, requestId);
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      onFinish?.(ctx, seconds);
      if (accessLog)
        ctx.state.log.http('request', {
          method: ctx.method,
          // the webhook's path may hold its secret: logged by its label
          path: loggablePath(ctx.path),
          status: ctx.status,
          ms: Math.round(seconds * 1e4) / 10,
          ip: ctx.ip,
        });
    }
  };
}
