import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A KEY_PREFIX of its own for each suite, so runs never see each other's state. It starts with
 * TEST_PREFIX_ROOT (default `test`): a suite run inside a test (the quick start's `npm test`,
 * stopped half-way) gets a root of its own, whose keys that test deletes afterwards.
 */
export function uniquePrefix(name: string): string {
  return `${process.env.TEST_PREFIX_ROOT ?? 'test'}-${name}-${randomBytes(4).toString('hex')}`;
}

export function testRedis(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
}

/** Deletes every key under a prefix (tests only: SCAN is fine here). */
export async function cleanPrefix(prefix: string): Promise<number> {
  return cleanMatching(`${prefix}:*`);
}

/** Deletes every key a SCAN pattern matches. */
export async function cleanMatching(pattern: string): Promise<number> {
  const redis = testRedis();
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (found.length > 0) deleted += await redis.del(...found);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}
