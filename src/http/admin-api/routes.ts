import type { AppRouter } from '../context.js';
import type { Services } from '../../services.js';
import { jsonBody } from '../middleware/json-body.js';
import { adminAccess } from './auth.js';
import { blockUser, unblockUser } from './block.js';
import { listEvents, streamEvents } from './events.js';
import { createKey, listKeys, me, revokeKey } from './keys.js';
import { addRole, endUserSession, endUserSessions, getUser, listUserSessions, listUsers, removeRole, setRoles } from './users.js';
import { eraseUser, exportUser } from './people-data.js';

/** The admin API's one versioned prefix (docs/accounts.md). */
export const ADMIN_API = '/admin/api/v1';

/** The admin API's JSON bodies, at most (as the rest of the API's). */
const ADMIN_BODY_LIMIT = '16kb';

/**
 * Every admin route, each behind adminAccess with the scope it needs; handlers in this folder.
 * Described in src/openapi/paths.ts like every other route.
 */
export function addAdminRoutes(router: AppRouter, services: Services): void {
  const read = (scope: 'users:read' | 'events:read') => adminAccess(services, scope);
  const json = jsonBody(ADMIN_BODY_LIMIT);
  router.get(`${ADMIN_API}/events`, read('events:read'), listEvents(services));
  router.get(`${ADMIN_API}/events/stream`, read('events:read'), streamEvents(services));
  // who is calling; the API keys, managed only by an admin signed in (never by a key)
  router.get(`${ADMIN_API}/me`, adminAccess(services, 'any'), me());
  const keyAdmin = adminAccess(services, 'session');
  router.get(`${ADMIN_API}/keys`, keyAdmin, listKeys(services));
  router.post(`${ADMIN_API}/keys`, keyAdmin, json, createKey(services));
  router.delete(`${ADMIN_API}/keys/:id`, keyAdmin, revokeKey(services));
  const write = adminAccess(services, 'users:write');

  // people (users.ts): the directory, one person, their sessions and roles
  router.get(`${ADMIN_API}/users`, read('users:read'), listUsers(services));
  router.get(`${ADMIN_API}/users/:id`, read('users:read'), getUser(services));
  router.get(`${ADMIN_API}/users/:id/sessions`, read('users:read'), listUserSessions(services));
  router.delete(`${ADMIN_API}/users/:id/sessions/:sid`, write, endUserSession(services));
  router.delete(`${ADMIN_API}/users/:id/sessions`, write, endUserSessions(services));
  router.put(`${ADMIN_API}/users/:id/roles`, write, json, setRoles(services));
  router.post(`${ADMIN_API}/users/:id/roles`, write, json, addRole(services));
  router.delete(`${ADMIN_API}/users/:id/roles/:role`, write, removeRole(services));
  // block and unblock (block.ts)
  router.post(`${ADMIN_API}/users/:id/block`, write, json, blockUser(services));
  router.delete(`${ADMIN_API}/users/:id/block`, write, unblockUser(services));
  router.get(`${ADMIN_API}/users/:id/export`, read('users:read'), exportUser(services));
  router.delete(`${ADMIN_API}/users/:id`, write, eraseUser(services));
}
