import { Ajv, type ValidateFunction } from 'ajv';
import type { Actor } from '../../accounts/actor.js';
import { DIRECTORY_LIMIT } from '../../accounts/directory.js';
import type { RoleChange } from '../../accounts/roles.js';
import * as schemas from '../../accounts/schemas.js';
import { AppError } from '../../errors.js';
import { OIDC_LOGIN_PREFIX } from '../../oidc/logins.js';
import { ipGroup } from '../../security/ip-group.js';
import type { Services } from '../../services.js';
import type { AppContext } from '../context.js';
import { adminOf } from './auth.js';

/**
 * The people routes of the admin API (docs/accounts.md, "Finding people", "Sessions", "Roles"):
 * the directory, one person in full, their sessions (app and OpenID) listed and ended, their
 * roles set, added and removed. Each behind adminAccess (routes.ts); every input validated here.
 */

const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });

function compile<T>(schema: object): (body: unknown) => T {
  const fn = ajv.compile(schema) as ValidateFunction<T>;
  return (body: unknown): T => {
    if (fn(body)) return body;
    const details = (fn.errors ?? []).map((e) => ({
      field:
        e.instancePath.replace(/^\//, '').replace(/\//g, '.') ||
        (e.keyword === 'required' ? String((e.params as { missingProperty?: string }).missingProperty) : '(body)'),
      message: e.message ?? 'is invalid',
    }));
    throw new AppError('VALIDATION_ERROR', `Invalid data: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, { details });
  };
}

const setRolesBody = compile<{ roles: string[] }>(schemas.setRolesBodySchema);
const addRoleBody = compile<{ role: string }>(schemas.addRoleBodySchema);

const USER_ID = /^[A-Za-z0-9_-]{8,64}$/;
const SESSION_ID = /^(?:oidc\.)?[A-Za-z0-9_-]{1,64}$/;

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', `Invalid data: ${field} ${message}`, { details: [{ field, message }] });
}

function one(ctx: AppContext, name: string): string | undefined {
  const v = ctx.query[name];
  if (Array.isArray(v)) throw invalid(name, 'given more than once');
  return v === undefined || v === '' ? undefined : v;
}

/** The path's user id, well-formed (else 400) and of a person who exists (else 404). */
async function knownUser(services: Pick<Services, 'directory'>, ctx: AppContext): Promise<string> {
  const id = String(ctx.params.id ?? '');
  if (!USER_ID.test(id)) throw invalid('id', 'must be a user id (8 to 64 characters: letters, digits, `_`, `-`)');
  if (!(await services.directory.exists(id))) throw new AppError('NOT_FOUND', 'No such user');
  return id;
}

/** What an audit record of an admin action carries of the request. */
function auditMeta(services: Pick<Services, 'config'>, ctx: AppContext): { actor: Actor; requestId: string; ipGroup: string } {
  return { actor: adminOf(ctx).actor, requestId: ctx.state.requestId, ipGroup: ipGroup(ctx.ip, services.config.rateLimits.ipv6PrefixLength) };
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
    for (const name of Object.keys(ctx.query)) if (!['q', 'cursor', 'limit'].includes(name)) throw invalid(name, 'is not a parameter of this route');
    const limitText = one(ctx, 'limit');
    const limit = limitText === undefined ? undefined : /^\d{1,3}$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (limit !== undefined && !(limit >= 1 && limit <= DIRECTORY_LIMIT.max)) throw invalid('limit', `must be 1..${DIRECTORY_LIMIT.max}`);
    const page = await services.directory.find({ q: one(ctx, 'q'), cursor: one(ctx, 'cursor'), limit });
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
export function endUserSession(services: Pick<Services, 'directory' | 'sessions' | 'oidcLogins' | 'audit' | 'config'>) {
  return async (ctx: AppContext): Promise<void> => {
    const id = await knownUser(services, ctx);
    const sid = String(ctx.params.sid ?? '');
    if (!SESSION_ID.test(sid)) throw invalid('sid', 'must be a session id of GET /admin/api/v1/users/{id}/sessions');
    const oidc = sid.startsWith(OIDC_LOGIN_PREFIX);
    const meta = auditMeta(services, ctx);
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
export function endUserSessions(services: Pick<Services, 'directory' | 'sessions' | 'audit' | 'config'>) {
  return async (ctx: AppContext): Promise<void> => {
    const id = await knownUser(services, ctx);
    // audited by Sessions, this admin the actor
    const closed = await services.sessions.endAll(id, auditMeta(services, ctx));
    ctx.state.log.info('signed out everywhere by an admin', { userId: id, sessions: closed });
    ctx.body = { success: true, closed };
  };
}

/** Records an admin action; the action is done: a trail that can't be written is logged, not the answer. */
async function record(services: Pick<Services, 'audit'>, ctx: AppContext, e: Parameters<Services['audit']['record']>[0]): Promise<void> {
  await services.audit.record(e).catch((err: unknown) => ctx.state.log.warn('audit record not written', { type: e.type, error: String(err) }));
}

function rolesRoute(services: Pick<Services, 'directory' | 'roles' | 'config'>, change: (ctx: AppContext) => RoleChange) {
  return async (ctx: AppContext): Promise<void> => {
    const id = await knownUser(services, ctx);
    const c = change(ctx);
    const { actor, requestId, ipGroup: group } = auditMeta(services, ctx);
    const roles = await services.roles.change(id, c, actor, { requestId, ipGroup: group });
    ctx.state.log.info('roles changed by an admin', { userId: id, roles });
    ctx.body = { success: true, roles };
  };
}

/** PUT /users/:id/roles {roles}: replaces them (`user` kept). */
export const setRoles = (services: Pick<Services, 'directory' | 'roles' | 'config'>) =>
  rolesRoute(services, (ctx) => ({ op: 'set', roles: setRolesBody(ctx.request.body).roles }));

/** POST /users/:id/roles {role}: adds one. */
export const addRole = (services: Pick<Services, 'directory' | 'roles' | 'config'>) =>
  rolesRoute(services, (ctx) => ({ op: 'add', role: addRoleBody(ctx.request.body).role }));

/** DELETE /users/:id/roles/:role: removes one (not `user`). */
export const removeRole = (services: Pick<Services, 'directory' | 'roles' | 'config'>) =>
  rolesRoute(services, (ctx) => ({ op: 'remove', role: String(ctx.params.role ?? '') }));
