import { AppError } from '../../errors.js';
import { OIDC_LOGIN_PREFIX } from '../../oidc/logins.js';
import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import { requestMeta } from '../audit-meta.js';
import type { AppContext } from '../context.js';

/**
 * The caller's own sessions (each after `authenticate`). A closed session's access and refresh
 * tokens are refused from then on.
 */

/**
 * GET /sessions: the app's sessions (`kind: "app"`) and the OpenID logins of apps signing the
 * person in through us (`kind: "oidc"`, ids starting with `oidc.`).
 */
export function listSessions({ sessions, oidcLogins }: Pick<Services, 'sessions' | 'oidcLogins'>) {
  return async (ctx: AppContext): Promise<void> => {
    const claims = ctx.state.claims!;
    const [own, oidc] = await Promise.all([sessions.list(claims.sub, claims.sid), oidcLogins.list(claims.sub)]);
    ctx.body = { success: true, sessions: [...own.map((s) => ({ kind: 'app', ...s })), ...oidc] };
  };
}

/** DELETE /sessions/:id: closes one (another user's id answers like an unknown one). */
export function endSession(services: Pick<Services, 'sessions' | 'oidcLogins' | 'limits' | 'audit'>) {
  const { sessions, oidcLogins, audit } = services;
  return async (ctx: AppContext): Promise<void> => {
    const { id } = validate.sessionParams(ctx.params);
    const userId = ctx.state.claims!.sub;
    const oidc = id.startsWith(OIDC_LOGIN_PREFIX);
    const meta = requestMeta(ctx, services);
    const ended = oidc ? await oidcLogins.end(userId, id.slice(OIDC_LOGIN_PREFIX.length)) : await sessions.end(userId, id, meta);
    if (!ended) throw new AppError('SESSION_NOT_FOUND');
    // an app session's end is recorded by Sessions; an OpenID login's here
    if (oidc) await audit.note({ type: 'session.ended', userId, ...meta, detail: { how: 'one', kind: 'oidc', sessions: 1, sessionId: id } });
    ctx.state.log.info(oidc ? 'OpenID login ended by its owner' : 'session closed by its owner', { sid: id });
    ctx.body = { success: true, message: 'Session closed' };
  };
}

/** DELETE /sessions: closes all of them (sign out everywhere, OpenID logins included). */
export function endAllSessions(services: Pick<Services, 'sessions' | 'limits'>) {
  return async (ctx: AppContext): Promise<void> => {
    const closed = await services.sessions.endAll(ctx.state.claims!.sub, requestMeta(ctx, services));
    ctx.state.log.info('signed out everywhere', { sessions: closed });
    ctx.body = { success: true, message: 'Signed out everywhere', closed };
  };
}
