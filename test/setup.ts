import { Redis } from 'ioredis';

/**
 * Root hooks: every run needs a real Redis at REDIS_URL (default 127.0.0.1:6379). Fail early
 * with a clear message rather than 100 confusing time-outs.
 */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    this.timeout(10000);
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      await redis.ping();
    } catch (err) {
      throw new Error(`The tests need a Redis server at ${process.env.REDIS_URL ?? '127.0.0.1:6379'}: ${String(err)}`);
    } finally {
      redis.disconnect();
    }
  },
};
