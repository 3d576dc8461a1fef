import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppRouter } from '../context.js';
import { jsonBody } from '../middleware/json-body.js';

/**
 * POST /check-login → pending `{success, verified: false, message}` or verified
 * `{success, verified: true, token, refreshToken, user}` (once). Rate-limited per IP, per PIN,
 * and tighter for unknown PINs so short PINs can't be enumerated.
 */
export function registerCheckLoginRoute(router: AppRouter, services: Services, bodyLimit: string): void {
  const { limits, registrations } = services;
  router.post('/check-login', jsonBody(bodyLimit), async (ctx) => {
    const { pin } = validate.checkLogin(ctx.request.body);
    const outcome = await limits.guess(ctx.ip, 'PIN_NOT_FOUND', async () => {
      // independent budgets: spent in one round trip's time (this endpoint is polled every second)
      await Promise.all([limits.consume('check', ctx.ip), limits.consume('checkPin', registrations.pinKey(pin))]);
      return registrations.check(pin);
    });
    if (outcome.state === 'pending') {
      ctx.body = { success: true, verified: false, message: 'Waiting for the chat message' };
      return;
    }
    ctx.state.log.info('login collected', { pinId: outcome.pinId, userId: outcome.result.user.id });
    ctx.body = { success: true, verified: true, ...outcome.result };
  });
}
