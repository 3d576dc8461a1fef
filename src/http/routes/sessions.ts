import { AppError } from '../../errors.js';
import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppRouter } from '../context.js';
import { authenticate } from '../middleware/authenticate.js';

/**
 * The caller's own sessions: `GET /sessions` lists them, `DELETE /sessions/:id` closes one
 * (another user's id answers like an unknown one), `DELETE /sessions` closes all of them (sign
 * out everywhere). A closed session's access and refresh tokens are refused from then on.
 */
export function registerSessionsRoutes(router: AppRouter, services: Services): void {
  const { sessions } = services;
  router.get('/sessions', authenticate(sessions), async (ctx) => {
    const claims = ctx.state.claims!;
    ctx.body = { success: true, sessions: await sessions.list(claims.sub, claims.sid) };
  });

  router.delete('/sessions/:id', authenticate(sessions), async (ctx) => {
    const { id } = validate.sessionParams(ctx.params);
    if (!(await sessions.end(ctx.state.claims!.sub, id))) throw new AppError('SESSION_NOT_FOUND');
    ctx.state.log.info('session closed by its owner', { sid: id });
    ctx.body = { success: true, message: 'Session closed' };
  });

  router.delete('/sessions', authenticate(sessions), async (ctx) => {
    const closed = await sessions.endAll(ctx.state.claims!.sub);
    ctx.state.log.info('signed out everywhere', { sessions: closed });
    ctx.body = { success: true, message: 'Signed out everywhere', closed };
  });
}
