import { AppError } from '../../errors.js';
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
    const blocked = await limits.exhausted('unknownPin', ctx.ip);
    if (blocked !== null) throw new AppError('RATE_LIMITED', 'Too many checks of unknown PINs', { retryAfter: blocked });
    await limits.consume('check', ctx.ip);
    await limits.consume('checkPin', services.registrations.pinKey(pin));
    try {
      const outcome = await registrations.check(pin);
      if (outcome.state === 'pending') {
        ctx.body = { success: true, verified: false, message: 'Waiting for the chat message' };
        return;
      }
      ctx.state.log.info('login collected', { pinId: outcome.pinId, userId: outcome.result.user.id });
      ctx.body = { success: true, verified: true, ...outcome.result };
    } catch (err) {
      if (err instanceof AppError && err.code === 'PIN_NOT_FOUND') await limits.tryConsume('unknownPin', ctx.ip);
      throw err;
    }
  });
}
