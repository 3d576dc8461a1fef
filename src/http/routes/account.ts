import type { Actor } from '../../accounts/actor.js';
import type { EraseMeta } from '../../accounts/erase.js';
import { AppError } from '../../errors.js';
import type { Services } from '../../services.js';
import type { AppContext } from '../context.js';

/**
 * The person's own rights over their account (docs/accounts.md, "Erase" and "Export"), after
 * `authenticate`: the account of the access token's subject, never another (there is no id to
 * name). The admin API's answers have the same shapes (admin-api/people-data.ts).
 */

/** The request's facts an audit record keeps: its id, the caller's IP group, never the whole address. */
export function auditMeta(services: Pick<Services, 'limits'>, ctx: AppContext): EraseMeta {
  return { requestId: ctx.state.requestId, ipGroup: services.limits.group(ctx.ip) };
}

/** A user id as a path names it: ids are opaque (22 base64url characters, or an older UUID); the people routes' rule. */
export function userIdParam(ctx: AppContext): string {
  const id = ctx.params.id;
  if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{8,64}$/.test(id)) {
    const message = 'must be a user id (8 to 64 characters: letters, digits, `_`, `-`)';
    throw new AppError('VALIDATION_ERROR', `Invalid data: id ${message}`, { details: [{ field: 'id', message }] });
  }
  return id;
}

/** GET /account/export → `{success, export}`: everything held about the caller. */
export function exportOwnAccount(services: Pick<Services, 'exporter' | 'limits'>) {
  return async (ctx: AppContext): Promise<void> => {
    const userId = ctx.state.claims!.sub;
    const actor: Actor = { kind: 'user', userId };
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, export: await services.exporter.export(userId, actor, auditMeta(services, ctx)) };
  };
}

/** DELETE /account → `{success, receipt}`: erases the caller's account; the token is dead once answered. */
export function deleteOwnAccount(services: Pick<Services, 'eraser' | 'limits'>) {
  return async (ctx: AppContext): Promise<void> => {
    const userId = ctx.state.claims!.sub;
    const receipt = await services.eraser.erase(userId, { kind: 'user', userId }, auditMeta(services, ctx));
    ctx.state.log.info('account erased by its owner', { receipt: receipt.id });
    ctx.body = { success: true, receipt };
  };
}
