import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppRouter } from '../context.js';
import { jsonBody } from '../middleware/json-body.js';

/** POST /register-pin → `{success, message, pinId, expiresIn}`. */
export function registerRegisterPinRoute(router: AppRouter, services: Services, bodyLimit: string): void {
  router.post('/register-pin', jsonBody(bodyLimit), async (ctx) => {
    const { pin, emojiString } = validate.registerPin(ctx.request.body);
    await services.limits.consume('register', ctx.ip);
    const reg = await services.registrations.register(pin, emojiString);
    ctx.state.log.info(reg.created ? 'pin registered' : 'pin re-registered', { pinId: reg.pinId });
    ctx.body = {
      success: true,
      message: reg.created ? 'PIN registered' : 'PIN already registered',
      pinId: reg.pinId,
      expiresIn: reg.expiresIn,
    };
  });
}
