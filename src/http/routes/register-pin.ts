import { originOf } from '../../auth/origin.js';
import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppRouter } from '../context.js';
import { jsonBody } from '../middleware/json-body.js';

/**
 * POST /register-pin `{pin, emojiString?}` → `{success, message, pinId, expiresIn, emojiString}`
 * (the emoji string to show: the client's own, or the one the server drew). Budgets and the
 * no-oracle rules live in the registration script (src/redis/scripts/register.lua).
 */
export function registerRegisterPinRoute(router: AppRouter, services: Services, bodyLimit: string): void {
  const { registrations } = services;
  router.post('/register-pin', jsonBody(bodyLimit), async (ctx) => {
    const { pin, emojiString } = validate.registerPin(ctx.request.body);
    const reg = await registrations.register(pin, emojiString, { ip: ctx.ip, via: 'http', origin: originOf(ctx.get('user-agent'), ctx.ip) });
    if (!reg.decoy) ctx.state.log.info(reg.created ? 'pin registered' : 'pin re-registered', { pinId: reg.pinId });
    ctx.body = {
      success: true,
      message: reg.created ? 'PIN registered' : 'PIN already registered',
      pinId: reg.pinId,
      expiresIn: reg.expiresIn,
      emojiString: reg.emojiString,
    };
  });
}
