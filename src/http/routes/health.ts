import { redisFault } from '../../errors.js';
import type { Services } from '../../services.js';
import type { AppContext } from '../context.js';

const HEALTH_TIMEOUT_MS = 1000;
/** the probe key outlives a few checks, never more */
const PROBE_TTL_MS = 60_000;

const within = <T>(p: Promise<T>): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('Command timed out (health)')), HEALTH_TIMEOUT_MS).unref())]);

const reasonOf = (err: unknown): string => redisFault(err) ?? 'error';

/**
 * GET /health, within about a second: 200 `ok` while Redis answers reads and takes writes;
 * 503 `degraded` with a `reason` (out-of-memory, read-only, persistence-failing...) while it
 * answers but refuses writes, so no login can complete; 503 `unavailable` with a `reason` while
 * it does not answer. The write probe is one small key per node that expires on its own.
 * activePins is the figure of the current window (Registrations.publishedActiveCount).
 */
export function health({ redis, keys, registrations, config }: Pick<Services, 'redis' | 'keys' | 'registrations' | 'config'>) {
  return async (ctx: AppContext): Promise<void> => {
    const [read, write] = await Promise.allSettled([
      within(registrations.publishedActiveCount(config.activePinsRefreshSeconds * 1000)),
      within(redis.set(keys.healthProbe(config.instanceName), Date.now(), 'PX', PROBE_TTL_MS)),
    ]);
    const activePins = read.status === 'fulfilled' ? read.value : null;
    let status: 'ok' | 'degraded' | 'unavailable' = 'ok';
    let reason: string | undefined;
    if (read.status === 'rejected') {
      status = 'unavailable';
      reason = reasonOf(read.reason);
    } else if (write.status === 'rejected') {
      status = 'degraded';
      reason = reasonOf(write.reason);
    }
    ctx.status = status === 'ok' ? 200 : 503;
    ctx.body = {
      status,
      timestamp: new Date().toISOString(),
      activePins,
      instance: config.instanceName,
      ...(reason !== undefined ? { reason } : {}),
    };
  };
}
