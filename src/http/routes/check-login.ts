import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppContext } from '../context.js';

/**
 * POST /check-login `{pin}` → pending `{success, verified: false, message}` (plus
 * `awaitingConfirmation: true` while the person is asked in the chat) or verified
 * `{success, verified: true, token, refreshToken, user}`, the same again within the retry
 * window; 403 LOGIN_DENIED after a NO. The budgets (per IP group, per PIN, wrong guesses per IP
 * group) are checked and spent by the check script itself: one atomic step, one round trip
 * (apps poll this every second).
 */
export function checkLogin({ registrations }: Pick<Services, 'registrations'>) {
  return async (ctx: AppContext): Promise<void> => {
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
    ctx.state.log.info('login collected', { pinId: outcome.pinId, userId: outcome.userId });
    // the login result as the worker kept it: `{token, refreshToken, user}`
    ctx.body = { success: true, verified: true, ...(JSON.parse(outcome.resultJson) as object) };
  };
}
