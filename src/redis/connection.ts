import { Redis, type RedisOptions } from 'ioredis';

/**
 * Redis connections by purpose. The request path must fail fast when Redis is down (no offline
 * queue, short timeouts) so clients get 503 instead of a hang; BullMQ workers and subscribers
 * must instead wait and reconnect for ever.
 */
export type ConnectionRole = 'command' | 'worker' | 'subscriber';

export function redisOptions(redisUrl: string, role: ConnectionRole): RedisOptions {
  const tls = redisUrl.startsWith('rediss://')
    ? // Heroku Redis presents a self-signed certificate.
      { tls: { rejectUnauthorized: false } }
    : {};
  const reconnect = { retryStrategy: (times: number) => Math.min(50 * times, 1000) };
  if (role === 'command') {
    return {
      ...tls,
      ...reconnect,
      enableOfflineQueue: false,
      connectTimeout: 1500,
      commandTimeout: 2000,
      maxRetriesPerRequest: 0,
    };
  }
  return { ...tls, ...reconnect, maxRetriesPerRequest: null, enableReadyCheck: true };
}

export function createRedis(redisUrl: string, role: ConnectionRole, name: string): Redis {
  const client = new Redis(redisUrl, { ...redisOptions(redisUrl, role), connectionName: name, lazyConnect: false });
  // Errors are reported through health checks and failed requests; an unhandled 'error' event would crash.
  client.on('error', () => undefined);
  return client;
}

/** Resolves once the client is ready, or rejects after timeoutMs. */
export function waitReady(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = (): void => {
      cleanup();
      resolve();
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      client.off('ready', onReady);
    };
    client.on('ready', onReady);
  });
}
