import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppRouter } from '../context.js';
import { authenticateAllowExpired } from '../middleware/authenticate.js';
import { jsonBody } from '../middleware/json-body.js';

/**
 * POST /refresh-token, both body forms: `{refreshToken}` rotates that refresh token
 * (reuse closes the session); `{id}` needs an unexpired access token for that user.
 */
export function registerRefreshTokenRoute(router: AppRouter, services: Services, bodyLimit: string): void {
  router.post('/refresh-token', authenticateAllowExpired(services.tokens), jsonBody(bodyLimit), async (ctx) => {
    const body = validate.refresh(ctx.request.body);
    const claims = ctx.state.claims!;
    const pair =
      body.refreshToken !== undefined
        ? await services.sessions.refreshWithToken(claims, body.refreshToken)
        : await services.sessions.refreshWithId(claims, body.id!);
    ctx.body = { success: true, token: pair.token, refreshToken: pair.refreshToken };
  });
}
