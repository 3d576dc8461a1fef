import type { Services } from '../../services.js';
import type { AppRouter } from '../context.js';

const HEALTH_TIMEOUT_MS = 1000;

/** GET /health: 200 while Redis answers, else 503 `unavailable` within about a second. */
export function registerHealthRoute(router: AppRouter, services: Services): void {
  router.get('/health', async (ctx) => {
    let activePins: number | null = null;
    try {
      activePins = await Promise.race([
        services.registrations.activeCount(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('health timeout')), HEALTH_TIMEOUT_MS).unref()),
      ]);
    } catch {
      activePins = null;
    }
    ctx.status = activePins === null ? 503 : 200;
    ctx.body = {
      status: activePins === null ? 'unavailable' : 'ok',
      timestamp: new Date().toISOString(),
      activePins,
      instance: services.config.instanceName,
    };
  });
}
