import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type { Queue } from 'bullmq';
import type { Middleware } from 'koa';

export const DASHBOARD_PATH = '/admin/queues';

/** True for the dashboard page and everything under it (assets, its JSON API). */
export const isDashboardPath = (path: string): boolean => path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);

/** Bull Board over every queue, mounted at /admin/queues (the caller puts the guard in front). */
export function dashboardMiddleware(queues: Queue[]): Middleware {
  const adapter = new KoaAdapter();
  adapter.setBasePath(DASHBOARD_PATH);
  // @bull-board/koa carries its own copy of @bull-board/api whose types differ only nominally
  type ServerAdapter = Parameters<typeof createBullBoard>[0]['serverAdapter'];
  createBullBoard({ queues: queues.map((q) => new BullMQAdapter(q)), serverAdapter: adapter as unknown as ServerAdapter });
  return adapter.registerPlugin() as unknown as Middleware;
}
