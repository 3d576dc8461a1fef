import { Blocks } from '../../accounts/block.js';
import { validateBlockBody } from '../../accounts/schemas.js';
import { AppError } from '../../errors.js';
import type { Services } from '../../services.js';
import { requestMeta } from '../audit-meta.js';
import type { AppContext } from '../context.js';
import { userIdParam } from '../params.js';
import { adminOf } from './auth.js';

/** POST /admin/api/v1/users/:id/block `{reason?}`: blocked, every session and OpenID login ended. */
export function blockUser(services: Services) {
  const blocks = new Blocks(services.scripts, services.keys, services.sessions, services.audit);
  return async (ctx: AppContext): Promise<void> => {
    const id = userIdParam(ctx);
    const body = validateBlockBody(ctx.request.body);
    const { actor } = adminOf(ctx);
    if (actor.kind === 'admin' && actor.userId === id) throw new AppError('FORBIDDEN', 'An admin cannot block their own account');
    const out = await blocks.block(id, actor, body.reason, requestMeta(ctx, services));
    ctx.body = { success: true, blockedAt: new Date(out.blockedAt).toISOString(), sessionsEnded: out.sessionsEnded };
  };
}

/** DELETE /admin/api/v1/users/:id/block: sign-in works again. */
export function unblockUser(services: Services) {
  const blocks = new Blocks(services.scripts, services.keys, services.sessions, services.audit);
  return async (ctx: AppContext): Promise<void> => {
    const id = userIdParam(ctx);
    await blocks.unblock(id, adminOf(ctx).actor, requestMeta(ctx, services));
    ctx.body = { success: true };
  };
}
