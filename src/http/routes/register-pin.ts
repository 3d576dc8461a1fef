import { originOf } from '../../registrations/origin.js';
import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppContext } from '../context.js';
import { IDEMPOTENCY_HEADER, IdempotencyKeys } from '../idempotency.js';

/**
 * POST /register-pin `{pin, emojiString?, idempotencyKey?}` → `{success, message, pinId,
 * expiresIn, emojiString, whatsappNumber?}` (the emoji string to show: the client's own, or the
 * one the server drew; the number to send it to, when one is configured). The
 * `Idempotency-Key` header, when sent, takes the place of the body's key. Budgets and the
 * no-oracle rules live in the registration script (src/redis/scripts/register.lua): a decoy's
 * answer looks like any other, and only real registrations are logged.
 */
export function registerPin({ registrations, health }: Pick<Services, 'registrations' | 'health'>) {
  return async (ctx: AppContext): Promise<void> => {
    const { pin, emojiString, idempotencyKey } = validate.registerPin(ctx.request.body);
    const key = IdempotencyKeys.parse(ctx.get(IDEMPOTENCY_HEADER)) ?? idempotencyKey;
    const reg = await registrations.register(pin, emojiString, { ip: ctx.ip, via: 'http', origin: originOf(ctx.get('user-agent'), ctx.ip) }, key);
    const writeTo = await health.writeTo();
    if (!reg.decoy) ctx.state.log.info(reg.created ? 'pin registered' : 'pin re-registered', { pinId: reg.pinId });
    ctx.body = {
      success: true,
      message: reg.created ? 'PIN registered' : 'PIN already registered',
      pinId: reg.pinId,
      expiresIn: reg.expiresIn,
      emojiString: reg.emojiString,
      // the number to write to: a healthy one of those configured (messaging/health.ts)
      ...(writeTo ? { whatsappNumber: writeTo.number } : {}),
    };
  };
}
