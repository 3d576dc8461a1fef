import { DIRECTORY_LIMIT } from '../../accounts/directory.js';
import type { RoleChange } from '../../accounts/roles.js';
import * as schemas from '../../accounts/schemas.js';
import { AppError } from '../../errors.js';
import { OIDC_LOGIN_PREFIX } from '../../oidc/logins.js';
import type { Services } from '../../services.js';
import { bodyValidator } from '../../validation/validate.js';
import type { AppContext } from '../context.js';
import { invalidField, queryOne, userIdParam } from '../params.js';
import { auditContext } from './auth.js';

/**
 * The people routes of the admin API (docs/accounts.md, "Finding people", "Sessions", "Roles"):
 * the directory, one person in full, their sessions (app and OpenID) listed and ended, their
 * roles set, added and removed. Each behind adminAccess (routes.ts); every input validated here.
 */

const setRolesBody = bodyValidator<{ roles: string[] }>(schemas.setRolesBodySchema);
const addRoleBody = bodyValidator<{ role: string }>(schemas.addRoleBodySchema);

const SESSION_ID = /^(?:oidc\.)?[A-Za-z0-9_-]{1,64}$/;

/** The path's user id, well-formed (else 400) and of a person who exists (else 404). */
async function knownUser(services: Pick<Services, 'directory'>, ctx: AppContext): Promise<string> {
  const id = userIdParam(ctx);
  if (!(await services.directory.exists(id))) throw new AppError('NOT_FOUND', 'No such user');
  return id;
}

export interface AdminSessionView {
  id: string;
  kind: 'app' | 'oidc';
  client: { id: string; name: string } | null;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  device: string;
  ip: string;
}

/** The person's app sessions and OpenID logins, oldest first. */
async function sessionsOf(services: Pick<Services, 'sessions' | 'oidcLogins'>, userId: string): Promise<AdminSessionView[]> {
  const [own, oidc] = await Promise.all([services.sessions.list(userId, ''), services.oidcLogins.list(userId)]);
  const out: AdminSessionView[] = [
    ...own.map((s) => ({
      id: s.id,
      kind: 'app' as const,
      client: null,
      createdAt: s.createdAt,
      lastUsedAt: s.lastUsedAt,
      expiresAt: s.expiresAt,
      device: s.device,
      ip: s.ip,
    })),
    ...oidc.map((s) => ({
      id: s.id,
      kind: 'oidc' as const,
      client: s.client,
      createdAt: s.createdAt,
      lastUsedAt: s.lastUsedAt,
      expiresAt: s.expiresAt,
      device: s.device,
      ip: s.ip,
    })),
  ];
  return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** GET /users?q&cursor&limit: a search, or everyone newest first. */
export function listUsers(services: Pick<Services, 'directory'>) {
  return async (ctx: AppContext): Promise<void> => {
    for (const name of Object.keys(ctx.query)) if (!['q', 'cursor', 'limit'].includes(name)) throw invalidField(name, 'is not a parameter of this route');
    const limitText = queryOne(ctx, 'limit');
    const limit = limitText === undefined ? undefined : /^\d{1,3}$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (limit !== undefined && !(limit >= 1 && limit <= DIRECTORY_LIMIT.max)) throw invalidField('limit', `must be 1..${DIRECTORY_LIMIT.max}`);
    const page = await services.directory.find({ q: queryOne(ctx, 'q'), cursor: queryOne(ctx, 'cursor'), limit });
    ctx.body = { success: true, ...page };
  };
}

/** GET /users/:id: the person in full, with their sessions and the latest 20 events about them. */
export function getUser(services: Pick<Services, 'directory' | 'sessions' | 'oidcLogins' | 'audit'>) {
  return async (ctx: AppContext): Promise<void> => {
    const id = await knownUser(services, ctx);
    const [record, sessions, events] = await Promise.all([
      services.directory.record(id),
      sessionsOf(services, id),
      services.audit.list({ userId: id, limit: 20 }),
    ]);
    if (record === null) throw new AppError('NOT_FOUND', 'No such user');
    ctx.body = { success: true, user: { ...record, sessions, events: events.events } };
  };
}

/** GET /users/:id/sessions */
export function listUserSessions(services: Pick<Services, 'directory' | 'sessions' | 'oidcLogins'>) {
  return async (ctx: AppContext): Promise<void> => {
    const id = await knownUser(services, ctx);
    ctx.body = { success: true, sessions: await sessionsOf(services, id) };
  };
}

/** DELETE /users/:id/sessions/:sid: ends one (an app session, or an OpenID login by its `oidc.` id); audited. */
export function endUserSession(services: Pick<Services, 'directory' | 'sessions' | 'oidcLogins' | 'audit' | 'limits'>) {
  return async (ctx: AppContext): Promise<void> => {
    const id = await knownUser(services, ctx);
    const sid = String(ctx.params.sid ?? '');
    if (!SESSION_ID.test(sid)) throw invalidField('sid', 'must be a session id of GET /admin/api/v1/users/{id}/sessions');
    const oidc = sid.startsWith(OIDC_LOGIN_PREFIX);
    const meta = auditContext(services, ctx);
    // an app session's end is audited by Sessions (with this admin as the actor), an OpenID login's here
    const ended = oidc ? await services.oidcLogins.end(id, sid.slice(OIDC_LOGIN_PREFIX.length)) : await services.sessions.end(id, sid, meta);
    // another person's session answers as an unknown one
    if (!ended) throw new AppError('SESSION_NOT_FOUND');
    ctx.state.log.info('session ended by an admin', { userId: id, kind: oidc ? 'oidc' : 'app' });
    if (oidc) await record(services, ctx, { type: 'session.ended', userId: id, ...meta, detail: { how: 'one', kind: 'oidc', sessions: 1, sessionId: sid } });
    ctx.body = { success: true, closed: 1 };
  };
}

/** DELETE /users/:id/sessions: every app session and OpenID login of the person; audited. */
export function endUserSessions(services: Pick<Services, 'directory' | 'sessions' | 'audit' | 'limits'>) {
  return async (ctx: AppContext): Promise<void> => {
    const id = await knownUser(services, ctx);
    // audited by Sessions, this admin the actor
    const closed = await services.sessions.endAll(id, auditContext(services, ctx));
    ctx.state.log.info('signed out everywhere by an admin', { userId: id, sessions: closed });
    ctx.body = { success: true, closed };
  };
}

/** Records an admin action; the action is done: a trail that can't be written is logged, not the answer. */
async function record(services: Pick<Services, 'audit'>, ctx: AppContext, e: Parameters<Services['audit']['record']>[0]): Promise<void> {
  await services.audit.record(e).catch((err: unknown) => ctx.state.log.warn('audit record not written', { type: e.type, error: String(err) }));
}

function rolesRoute(services: Pick<Services, 'directory' | 'roles' | 'limits'>, change: (ctx: AppContext) => RoleChange) {
  return async (ctx: AppContext): Promise<void> => {
    const id = await knownUser(services, ctx);
    const c = change(ctx);
    const { actor, requestId, ipGroup: group } = auditContext(services, ctx);
    const roles = await services.roles.change(id, c, actor, { requestId, ipGroup: group });
    ctx.state.log.info('roles changed by an admin', { userId: id, roles });
    ctx.body = { success: true, roles };
  };
}

/** PUT /users/:id/roles {roles}: replaces them (`user` kept). */
export const setRoles = (services: Pick<Services, 'directory' | 'roles' | 'limits'>) =>
  rolesRoute(services, (ctx) => ({ op: 'set', roles: setRolesBody(ctx.request.body).roles }));

/** POST /users/:id/roles {role}: adds one. */
export const addRole = (services: Pick<Services, 'directory' | 'roles' | 'limits'>) =>
  rolesRoute(services, (ctx) => ({ op: 'add', role: addRoleBody(ctx.request.body).role }));

/** DELETE /users/:id/roles/:role: removes one (not `user`). */
export const removeRole = (services: Pick<Services, 'directory' | 'roles' | 'limits'>) =>
  rolesRoute(services, (ctx) => ({ op: 'remove', role: String(ctx.params.role ?? '') }));
