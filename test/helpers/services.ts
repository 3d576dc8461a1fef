import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/observability/logger.js';
import { waitReady } from '../../src/redis/connection.js';
import { createServices, type Services } from '../../src/services.js';
import { RELAXED_LIMITS } from './processes.js';
import { cleanPrefix, REDIS_URL, uniquePrefix } from './redis.js';

/**
 * The service's parts in the test's own process (for tests that drive one step or script
 * directly), on the shared Redis under a KEY_PREFIX of their own, keys loaded and Redis ready.
 */
export async function startServices(name: string, env: Record<string, string>): Promise<Services> {
  const config = loadConfig({ CHAT_REPLY_KINDS: 'all', ...RELAXED_LIMITS, KEY_PREFIX: uniquePrefix(name), REDIS_URL, ...env });
  const services = createServices(config, createLogger({ level: 'error', production: false, role: 'test', instance: 'test' }), 'test');
  // a cluster's slot map can take a while on a loaded machine
  await waitReady(services.redis, 10000);
  await services.ready();
  return services;
}

/** Closes what startServices opened and deletes its keys. */
export async function stopServices(services: Services | undefined): Promise<void> {
  if (!services) return;
  try {
    await services.close();
  } finally {
    // the keys go even when closing failed
    await cleanPrefix(services.keys.prefix);
  }
}
