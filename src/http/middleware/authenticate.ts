import type { Next } from 'koa';
import type { Sessions } from '../../auth/sessions.js';
import type { TokenService } from '../../auth/tokens.js';
import { AppError } from '../../errors.js';
import type { AppContext } from '../context.js';
import { parseBearer } from '../../auth/bearer.js';

const bearerToken = (ctx: AppContext): string | undefined => parseBearer(ctx.get('authorization')) ?? undefined;

/** Protected endpoints: a verified, unexpired access token whose session is still open. */
export function authenticate(sessions: Sessions) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    ctx.state.claims = await sessions.authenticate(bearerToken(ctx));
    await next();
  };
}

/**
 * POST /refresh-token: an access token of ours, its expiry not held against it (it proves who
 * asks; the refresh token or the session decides). Checked before the body is read, so a request
 * without one is told so first.
 */
export function accessTokenOfAnyAge(tokens: TokenService) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const token = bearerToken(ctx);
    if (!token) throw new AppError('AUTHENTICATION_FAILED', 'Missing bearer token');
    ctx.state.claims = tokens.verify(token, 'access', { allowExpired: true, replacing: true });
    await next();
  };
}
