import { AppError } from '../../errors.js';
import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppRouter } from '../context.js';
import { authenticate } from '../middleware/authenticate.js';
import { jsonBody } from '../middleware/json-body.js';

/** POST /logout `{userId}` or `{id}`: closes the token's session at once. */
export function registerLogoutRoute(router: AppRouter, services: Services, bodyLimit: string): void {
  router.post('/logout', authenticate(services.sessions), jsonBody(bodyLimit), async (ctx) => {
    const body = validate.logout(ctx.request.body);
    if (body.userId !== undefined && body.id !== undefined && body.userId !== body.id) {
      throw new AppError('VALIDATION_ERROR', 'userId and id disagree', { details: [{ field: 'id', message: 'must equal userId' }] });
    }
    await services.sessions.logout(ctx.state.claims!, (body.userId ?? body.id)!);
    ctx.state.log.info('logged out');
    ctx.body = { success: true, message: 'Logged out' };
  });
}
