import type { Next } from 'koa';
import type { Logger } from '../observability/logger.js';
import type { ApiCall, ApiHandler } from './api-core.js';
import type { AppContext } from './context.js';
import { JsonText } from './json-text.js';

type BodyParser = (ctx: AppContext, next: Next) => Promise<void>;

const nothing = async (): Promise<void> => undefined;

/**
 * A shared API handler (api-core.ts) as a Koa route: the body through the API's JSON parser
 * (json-body.ts) when the handler asks for it, and the verified user handed back to the access
 * line and to later log lines.
 */
export function koaApi(handler: ApiHandler, parseBody?: BodyParser) {
  return async (ctx: AppContext): Promise<void> => {
    let userLog: Logger | undefined;
    const call: ApiCall = {
      body: async () => {
        if (parseBody) await parseBody(ctx, nothing);
        return ctx.request.body;
      },
      ip: ctx.ip,
      userAgent: ctx.get('user-agent'),
      authorization: ctx.get('authorization'),
      idempotencyKey: ctx.get('idempotency-key'),
      log: () => (call.claims ? (userLog ??= ctx.state.log.child({ userId: call.claims.sub })) : ctx.state.log),
      info: (message, fields) => call.log().info(message, fields),
    };
    try {
      const body = await handler(call);
      if (body instanceof JsonText) {
        ctx.type = 'application/json';
        ctx.body = body.text;
      } else {
        ctx.body = body;
      }
    } finally {
      if (call.claims) ctx.state.claims = call.claims;
    }
  };
}
