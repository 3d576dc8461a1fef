import type { Actor } from '../../accounts/actor.js';
import type { Services } from '../../services.js';
import { requestMeta } from '../audit-meta.js';
import type { AppContext } from '../context.js';

/**
 * The person's own rights over their account (docs/accounts.md, "Erase" and "Export"), after
 * `authenticate`: the account of the access token's subject, never another (there is no id to
 * name). The admin API's answers have the same shapes (admin-api/people-data.ts).
 */

/** GET /account/export → `{success, export}`: everything held about the caller. */
export function exportOwnAccount(services: Pick<Services, 'exporter' | 'limits'>) {
  return async (ctx: AppContext): Promise<void> => {
    const userId = ctx.state.claims!.sub;
    const actor: Actor = { kind: 'user', userId };
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, export: await services.exporter.export(userId, actor, requestMeta(ctx, services)) };
  };
}

/** DELETE /account → `{success, receipt}`: erases the caller's account; the token is dead once answered. */
export function deleteOwnAccount(services: Pick<Services, 'eraser' | 'limits'>) {
  return async (ctx: AppContext): Promise<void> => {
    const userId = ctx.state.claims!.sub;
    const receipt = await services.eraser.erase(userId, { kind: 'user', userId }, requestMeta(ctx, services));
    ctx.state.log.info('account erased by its owner', { receipt: receipt.id });
    ctx.body = { success: true, receipt };
  };
}
