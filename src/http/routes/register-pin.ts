import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppRouter } from '../context.js';
import { jsonBody } from '../middleware/json-body.js';

/** POST /register-pin → `{success, message, pinId, expiresIn}`. */
export function registerRegisterPinRoute(router: AppRouter, services: Services, bodyLimit: string): void {
  router.post('/register-pin', jsonBody(bodyLimit), async (ctx) => {
    const { pin, emojiString } = validate.registerPin(ctx.request.body);
    const { limits, registrations } = services;
    // a conflict tells the caller "this PIN is taken": it spends from the wrong-guess budget
    const reg = await limits.guess(ctx.ip, 'PIN_CONFLICT', async () => {
      await limits.consume('register', ctx.ip);
      return registrations.register(pin, emojiString);
    });
    ctx.state.log.info(reg.created ? 'pin registered' : 'pin re-registered', { pinId: reg.pinId });
    ctx.body = {
      success: true,
      message: reg.created ? 'PIN registered' : 'PIN already registered',
      pinId: reg.pinId,
      expiresIn: reg.expiresIn,
    };
  });
}
