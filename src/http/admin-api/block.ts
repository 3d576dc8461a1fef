import { Blocks } from '../../accounts/block.js';
import { validateBlockBody } from '../../accounts/schemas.js';
import { AppError } from '../../errors.js';
import { clientIp } from '../../security/client-ip.js';
import { ipGroup } from '../../security/ip-group.js';
import type { Services } from '../../services.js';
import type { AppContext } from '../context.js';
import { adminOf } from './auth.js';

/** A user id as ids.ts makes them (base64url), the same rule as users.ts; anything else names nobody. */
const USER_ID = /^[A-Za-z0-9_-]{8,64}$/;

function userIdOf(ctx: AppContext): string {
  const id = String(ctx.params.id ?? '');
  if (!USER_ID.test(id)) {
    const message = 'must be a user id (8 to 64 characters: letters, digits, `_`, `-`)';
    throw new AppError('VALIDATION_ERROR', `Invalid data: id ${message}`, { details: [{ field: 'id', message }] });
  }
  return id;
}

function metaOf(services: Services, ctx: AppContext) {
  const ip = clientIp(ctx.req.headers, ctx.req.socket.remoteAddress, services.config.trustProxy);
  return { requestId: ctx.state.requestId, ipGroup: ipGroup(ip, services.config.rateLimits.ipv6PrefixLength) };
}

/** POST /admin/api/v1/users/:id/block `{reason?}`: blocked, every session and OpenID login ended. */
export function blockUser(services: Services) {
  const blocks = new Blocks(services.scripts, services.keys, services.sessions, services.audit);
  return async (ctx: AppContext): Promise<void> => {
    const id = userIdOf(ctx);
    const body = validateBlockBody(ctx.request.body);
    const { actor } = adminOf(ctx);
    if (actor.kind === 'admin' && actor.userId === id) throw new AppError('FORBIDDEN', 'An admin cannot block their own account');
    const out = await blocks.block(id, actor, body.reason, metaOf(services, ctx));
    ctx.body = { success: true, blockedAt: new Date(out.blockedAt).toISOString(), sessionsEnded: out.sessionsEnded };
  };
}

/** DELETE /admin/api/v1/users/:id/block: sign-in works again. */
export function unblockUser(services: Services) {
  const blocks = new Blocks(services.scripts, services.keys, services.sessions, services.audit);
  return async (ctx: AppContext): Promise<void> => {
    const id = userIdOf(ctx);
    await blocks.unblock(id, adminOf(ctx).actor, metaOf(services, ctx));
    ctx.body = { success: true };
  };
}
