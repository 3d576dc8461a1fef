import type { Services } from '../../services.js';
import type { AppRouter } from '../context.js';
import { authenticate } from '../middleware/authenticate.js';

/** GET /profile → `{success, user: {id, name, surname, phone, roles}}`. */
export function registerProfileRoute(router: AppRouter, services: Services): void {
  router.get('/profile', authenticate(services.sessions), async (ctx) => {
    ctx.body = { success: true, user: await services.sessions.user(ctx.state.claims!.sub) };
  });
}
