import type { Services } from '../../services.js';
import type { AppContext } from '../context.js';
import { requestMeta } from '../audit-meta.js';
import { userIdParam } from '../params.js';
import { adminOf } from './auth.js';

/** GET /admin/api/v1/users/:id/export → `{success, export}` (users:read): everything held about the person. */
export function exportUser(services: Pick<Services, 'exporter' | 'limits'>) {
  return async (ctx: AppContext): Promise<void> => {
    const id = userIdParam(ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, export: await services.exporter.export(id, adminOf(ctx).actor, requestMeta(ctx, services)) };
  };
}

/** DELETE /admin/api/v1/users/:id → `{success, receipt}` (users:write): erases the person (or finishes their erase). */
export function eraseUser(services: Pick<Services, 'eraser' | 'limits'>) {
  return async (ctx: AppContext): Promise<void> => {
    const id = userIdParam(ctx);
    const receipt = await services.eraser.erase(id, adminOf(ctx).actor, requestMeta(ctx, services));
    ctx.state.log.info('account erased by an operator', { receipt: receipt.id });
    ctx.body = { success: true, receipt };
  };
}
