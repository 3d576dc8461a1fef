import { keys } from '../../src/redis/keys.js';
import { expect } from 'chai';
import { Queue } from 'bullmq';
import { messageKey } from '../../src/messaging/inbound.js';
import type { LoginBody } from '../helpers/flow.js';
import { eventually, post, type JsonResponse } from '../helpers/http.js';
import { REDIS_URL, testRedis } from '../helpers/redis.js';

/** Small helpers shared by the core suites (the shared ones live in test/helpers). */

/** A fixed secret so tests can forge tokens (expired ones, foreign ones) the service must judge. */
export const TEST_JWT_SECRET = 'core-tests-secret-0123456789abcdef0123456789';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Asserts the documented error body: `{success: false, error: CODE, message}` with the status. */
export function expectError(res: JsonResponse, status: number, code: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body.success, res.text).to.equal(false);
  expect(res.body.error, res.text).to.equal(code);
  expect(res.body.message, res.text).to.be.a('string').and.not.equal('');
}

/** Keys under the suite's prefix matching `pattern` (tests only: SCAN is fine here). */
export async function keysUnder(prefix: string, pattern: string): Promise<string[]> {
  const redis = testRedis();
  const found: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:${pattern}`, 'COUNT', 1000);
      cursor = next;
      found.push(...batch);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return found;
}

/** A BullMQ handle on one of the stack's queues, to look at job states as an operator would. */
export function stackQueue(prefix: string, name: 'inbound' | 'expiry' | 'outbound', redisUrl = REDIS_URL): Queue {
  return new Queue(name, { connection: { url: redisUrl, maxRetriesPerRequest: 3 }, prefix: keys(prefix).queuePrefix(name) });
}

export async function register(base: string, pin: string, emojiString: string): Promise<JsonResponse> {
  return post(base, '/register-pin', { pin, emojiString });
}

/** The digest the service uses for a message id (the webhook's job id is `m` + this). */
export function evolutionJobId(instance: string, rawId: string): string {
  return `m${messageKey('evolution', instance, rawId)}`;
}

/** Polls /check-login until the login is there, and collects it (fails on anything but 200). */
export function waitVerified(base: string, pin: string): Promise<LoginBody> {
  return eventually(async () => {
    const r = await post<LoginBody>(base, '/check-login', { pin });
    expect(r.status, r.text).to.equal(200);
    return r.body.verified ? r.body : undefined;
  });
}
