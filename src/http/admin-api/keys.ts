import { actorText } from '../../accounts/actor.js';
import { AppError } from '../../errors.js';
import type { Services } from '../../services.js';
import type { AppContext } from '../context.js';
import { adminOf, auditContext } from './auth.js';

/** GET /admin/api/v1/me: who the door let in (an admin or an API key) and what it may do. */
export function me() {
  return async (ctx: AppContext): Promise<void> => {
    const { actor, scopes } = adminOf(ctx);
    ctx.body = { success: true, actor, scopes: [...scopes].sort() };
  };
}

/** GET /admin/api/v1/keys (an admin signed in): every API key, newest first, never a secret. */
export function listKeys(services: Services) {
  return async (ctx: AppContext): Promise<void> => {
    ctx.body = { success: true, keys: await services.apiKeys.list() };
  };
}

/** POST /admin/api/v1/keys `{name, scopes}` (an admin signed in): the key and its secret, shown this once. */
export function createKey(services: Services) {
  return async (ctx: AppContext): Promise<void> => {
    const body = ctx.request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AppError('VALIDATION_ERROR', 'The body must be an object {name, scopes}');
    const extra = Object.keys(body).find((k) => k !== 'name' && k !== 'scopes');
    if (extra !== undefined) {
      throw new AppError('VALIDATION_ERROR', `Invalid data: ${extra.slice(0, 40)} is not a field of a key`, {
        details: [{ field: extra.slice(0, 40), message: 'is not allowed' }],
      });
    }
    const audit = auditContext(services, ctx);
    const { key, secret } = await services.apiKeys.create(body as { name?: unknown; scopes?: unknown }, audit.actor);
    await services.audit.record({ type: 'key.created', ...audit, detail: { keyId: key.id, name: key.name, scopes: key.scopes.join(',') } });
    ctx.state.log.info('api key created', { keyId: key.id, by: actorText(audit.actor) });
    ctx.body = { success: true, key, secret };
  };
}

/** DELETE /admin/api/v1/keys/:id (an admin signed in): revoked at once; again is no error. Unknown: 404. */
export function revokeKey(services: Services) {
  return async (ctx: AppContext): Promise<void> => {
    const audit = auditContext(services, ctx);
    const { key, changed } = await services.apiKeys.revoke(String(ctx.params.id));
    if (changed) {
      await services.audit.record({ type: 'key.revoked', ...audit, detail: { keyId: key.id, name: key.name } });
      ctx.state.log.info('api key revoked', { keyId: key.id, by: actorText(audit.actor) });
    }
    ctx.body = { success: true };
  };
}
