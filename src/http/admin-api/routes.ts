import type { AppRouter } from '../context.js';
import type { Services } from '../../services.js';
import { adminAccess } from './auth.js';
import { listEvents } from './events.js';

/** The admin API's one versioned prefix (docs/accounts.md). */
export const ADMIN_API = '/admin/api/v1';

/**
 * Every admin route, each behind adminAccess with the scope it needs; handlers in this folder.
 * Described in src/openapi/paths.ts like every other route.
 */
export function addAdminRoutes(router: AppRouter, services: Services): void {
  const read = (scope: 'users:read' | 'events:read') => adminAccess(services, scope);
  router.get(`${ADMIN_API}/events`, read('events:read'), listEvents(services));
}
