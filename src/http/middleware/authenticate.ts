import type { Next } from 'koa';
import { AppError } from '../../errors.js';
import type { Sessions } from '../../auth/sessions.js';
import type { TokenService } from '../../auth/tokens.js';
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

/** /refresh-token: the access token must be ours, but its expiry is not held against it. */
export function authenticateAllowExpired(tokens: TokenService) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const bearer = bearerToken(ctx);
    if (!bearer) throw new AppError('AUTHENTICATION_FAILED', 'Missing bearer token');
    ctx.state.claims = tokens.verify(bearer, 'access', { allowExpired: true });
    ctx.state.log = ctx.state.log.child({ userId: ctx.state.claims.sub });
    await next();
  };
}
