import type { Next } from 'koa';
import { ADMIN_SCOPES, type AdminCaller, type AdminScope } from '../../accounts/actor.js';
import { parseBearer } from '../../auth/bearer.js';
import { parseRoles } from '../../auth/roles.js';
import { AppError } from '../../errors.js';
import type { Services } from '../../services.js';
import type { AppContext } from '../context.js';

/** The role that opens the console and every admin route (docs/accounts.md, "Who may do it"). */
export const ADMIN_ROLE = 'admin';

export interface AdminState {
  admin?: AdminCaller;
}

/**
 * An admin route's door: an access token of an open session whose user holds the `admin` role
 * now (read from the user record, so a role taken away takes effect at once), allowed every
 * scope. No credential or a bad one: 401; signed in without the role, or without `scope`: 403.
 */
export function adminAccess(services: Services, scope: AdminScope) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const bearer = parseBearer(ctx.get('authorization')) ?? undefined;
    const claims = await services.sessions.authenticate(bearer);
    ctx.state.claims = claims;
    const roles = parseRoles(await services.redis.hget(services.keys.user(claims.sub), 'roles'), []);
    if (!roles.includes(ADMIN_ROLE)) throw new AppError('FORBIDDEN', 'This needs the admin role');
    const caller: AdminCaller = { actor: { kind: 'admin', userId: claims.sub }, scopes: new Set(ADMIN_SCOPES) };
    if (!caller.scopes.has(scope)) throw new AppError('FORBIDDEN', `This needs the ${scope} scope`);
    (ctx.state as AdminState).admin = caller;
    await next();
  };
}

/** The caller adminAccess let in (a handler behind it). */
export function adminOf(ctx: AppContext): AdminCaller {
  const a = (ctx.state as AdminState).admin;
  if (a === undefined) throw new AppError('AUTHENTICATION_FAILED');
  return a;
}
