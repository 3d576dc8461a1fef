import type { Queue } from 'bullmq';
import type { Middleware, Next } from 'koa';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import type { AppContext, AppState } from '../context.js';
import { adminGuard } from './basic-auth.js';
import type { AdminLoginThrottle } from './login-throttle.js';
import { dashboardMiddleware, isDashboardPath } from './dashboard.js';
import { METRICS_PATH, metricsRoute } from './metrics-route.js';
import { sameOriginWrites } from './same-origin.js';

/**
 * The operator pages: Bull Board at /admin/queues (basic auth) and /metrics (basic auth or
 * METRICS_TOKEN). Without ADMIN_PASSWORD the dashboard is not mounted (404 like any unknown
 * path), and /metrics is served only when METRICS_TOKEN is set: a scraper's bearer token alone
 * is enough to expose metrics, never the dashboard. Wrong credentials are counted per IP group
 * (login-throttle.ts): past the budget, 429.
 */
export function adminMiddleware(
  config: Config,
  queues: Queue[],
  renderMetrics: () => Promise<{ contentType: string; text: string }>,
  throttle?: AdminLoginThrottle,
): Middleware<AppState>[] {
  const hasAdmin = config.adminPassword !== undefined && config.adminUser !== undefined;
  if (!hasAdmin && config.metricsToken === undefined) return [];
  const dashboardGuard = adminGuard({ user: config.adminUser, password: config.adminPassword }, throttle);
  const metricsGuard = adminGuard({ user: config.adminUser, password: config.adminPassword, bearer: config.metricsToken }, throttle);
  const board = dashboardMiddleware(queues);
  const csrf = sameOriginWrites();
  const dashboard = (ctx: AppContext, next: Next): Promise<void> =>
    csrf(ctx, async () => {
      await board(ctx, next);
      // Bull Board answers its own failures with 500; its only backend is Redis, so they become
      // the service's 503 NETWORK_ERROR body (the cause is logged, never sent).
      if (ctx.status >= 500) throw new AppError('NETWORK_ERROR', undefined, { cause: new Error(JSON.stringify(ctx.body)) });
    });
  const metrics = metricsRoute(renderMetrics);

  const route = async (ctx: AppContext, next: Next): Promise<void> => {
    if (hasAdmin && isDashboardPath(ctx.path)) return dashboardGuard(ctx, () => dashboard(ctx, next));
    if (ctx.path === METRICS_PATH) return metricsGuard(ctx, () => metrics(ctx, next));
    return next();
  };
  return [route as unknown as Middleware<AppState>];
}
