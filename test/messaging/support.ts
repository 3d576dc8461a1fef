import { Queue } from 'bullmq';
import jwt from 'jsonwebtoken';
import { WebhookAuth } from '../../src/messaging/webhook-auth.js';
import { eventually, request } from '../helpers/http.js';
import { keys } from '../../src/redis/keys.js';
import { REDIS_URL } from '../helpers/redis.js';

/** What the messaging suites share: gateway credentials, raw posts, a look at the queues in Redis. */

/** A token as Evolution API makes it for its `jwt_key` webhook header. */
export function evolutionJwt(key: string, opts: { expiresInSeconds?: number | null; iatOffsetSeconds?: number } = {}): string {
  const iat = Math.floor(Date.now() / 1000) + (opts.iatOffsetSeconds ?? 0);
  const claims: Record<string, unknown> = { iat, app: 'evolution', action: 'webhook' };
  if (opts.expiresInSeconds !== null) claims.exp = iat + (opts.expiresInSeconds ?? 600);
  // jsonwebtoken keeps the payload's own iat (as in Evolution, which sets it)
  return jwt.sign(claims, key, { algorithm: 'HS256' });
}

export const sign = (raw: string | Buffer, secret: string): string => WebhookAuth.sign(raw, secret);

/** POSTs these exact bytes to the webhook. */
export function postWebhook(base: string, raw: string | Buffer, headers: Record<string, string> = {}) {
  return request(base, 'POST', '/messaging-endpoint', { raw, headers: { 'content-type': 'application/json', ...headers } });
}

/** A BullMQ handle on one of the stack's queues (to read counts and jobs); close it after. */
export function queueOf(prefix: string, name: 'inbound' | 'outbound'): Queue {
  const url = new URL(REDIS_URL);
  return new Queue(name, { connection: { host: url.hostname, port: Number(url.port || 6379) }, prefix: keys(prefix).queuePrefix(name) });
}

/** The jobs of a queue by state (a webhook's 200 means its messages' jobs are on the queue). */
export async function jobCounts(queue: Queue) {
  const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed', 'waiting-children');
  const pending = (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) + (c['waiting-children'] ?? 0);
  return { pending, completed: c.completed ?? 0, failed: c.failed ?? 0, total: pending + (c.completed ?? 0) + (c.failed ?? 0) };
}

/** Waits until the queue has nothing waiting, delayed or running. */
export async function settled(queue: Queue, timeoutMs = 15000) {
  return eventually(
    async () => {
      const c = await jobCounts(queue);
      return c.pending === 0 ? c : undefined;
    },
    timeoutMs,
    100,
  );
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function inBatches<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}
