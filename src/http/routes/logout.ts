import { AppError } from '../../errors.js';
import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import { requestMeta } from '../audit-meta.js';
import type { AppContext } from '../context.js';

/** POST /logout `{userId}` or `{id}` (after `authenticate`): closes the token's session at once. */
export function logout(services: Pick<Services, 'sessions' | 'limits'>) {
  const { sessions } = services;
  return async (ctx: AppContext): Promise<void> => {
    const body = validate.logout(ctx.request.body);
    if (body.userId !== undefined && body.id !== undefined && body.userId !== body.id) {
      throw new AppError('VALIDATION_ERROR', 'userId and id disagree', { details: [{ field: 'id', message: 'must equal userId' }] });
    }
    await sessions.logout(ctx.state.claims!, (body.userId ?? body.id)!, requestMeta(ctx, services));
    ctx.state.log.info('logged out');
    ctx.body = { success: true, message: 'Logged out' };
  };
}
