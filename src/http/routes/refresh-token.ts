import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import { requestMeta } from '../audit-meta.js';
import type { AppContext } from '../context.js';

/**
 * POST /refresh-token (after `accessTokenOfAnyAge`: the caller's access token, expired or not),
 * both body forms: `{refreshToken}` rotates that refresh token (its reuse closes the session);
 * `{id}` needs an unexpired access token for that user. → `{success, token, refreshToken}`.
 */
export function refreshToken(services: Pick<Services, 'sessions' | 'limits'>) {
  const { sessions } = services;
  return async (ctx: AppContext): Promise<void> => {
    const claims = ctx.state.claims!;
    const body = validate.refresh(ctx.request.body);
    const meta = requestMeta(ctx, services);
    const pair =
      body.refreshToken !== undefined ? await sessions.refreshWithToken(claims, body.refreshToken, meta) : await sessions.refreshWithId(claims, body.id!, meta);
    // the new pair as the rotation kept it for a retry: `{token, refreshToken}`
    ctx.body = { success: true, ...(JSON.parse(pair) as object) };
  };
}
