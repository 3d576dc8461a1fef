import type { Next } from 'koa';
import type { Sessions } from '../../auth/sessions.js';
import type { AppContext } from '../context.js';
import { parseBearer } from '../../auth/bearer.js';

const bearerToken = (ctx: AppContext): string | undefined => parseBearer(ctx.get('authorization')) ?? undefined;

/** Protected endpoints: a verified, unexpired access token whose session is still open. */
export function authenticate(sessions: Sessions) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    ctx.state.claims = await sessions.authenticate(bearerToken(ctx));
    ctx.state.log = ctx.state.log.child({ userId: ctx.state.claims.sub });
    await next();
  };
}
