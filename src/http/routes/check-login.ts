import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppRouter } from '../context.js';
import { jsonBody } from '../middleware/json-body.js';

/**
 * POST /check-login → pending `{success, verified: false, message}` (plus
 * `awaitingConfirmation: true` while the person is asked in the chat) or verified
 * `{success, verified: true, token, refreshToken, user}` (once); 403 LOGIN_DENIED after a NO.
 * The budgets (per IP group, per PIN, wrong guesses per IP group) are checked and spent by the
 * check script itself: one atomic step, one round trip (this endpoint is polled every second).
 */
export function registerCheckLoginRoute(router: AppRouter, services: Services, bodyLimit: string): void {
  const { registrations } = services;
  router.post('/check-login', jsonBody(bodyLimit), async (ctx) => {
    const { pin } = validate.checkLogin(ctx.request.body);
    const outcome = await registrations.check(pin, { ip: ctx.ip, via: 'http' });
    if (outcome.state === 'pending') {
      ctx.body = { success: true, verified: false, message: 'Waiting for the chat message' };
      return;
    }
    if (outcome.state === 'awaiting') {
      ctx.body = { success: true, verified: false, awaitingConfirmation: true, message: 'Waiting for the person to confirm in the chat' };
      return;
    }
    ctx.state.log.info('login collected', { pinId: outcome.pinId, userId: outcome.result.user.id });
    ctx.body = { success: true, verified: true, ...outcome.result };
  });
}
