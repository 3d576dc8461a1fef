import { keys } from '../../src/redis/keys.js';
import { Queue } from 'bullmq';
import { io, type Socket } from 'socket.io-client';
import { expect } from 'chai';
import { QUEUE } from '../../src/queues/jobs.js';
import { randomEmoji, randomPhone, randomPin, sendChat, type LoginBody } from '../helpers/flow.js';
import { eventually, request, type JsonResponse } from '../helpers/http.js';
import { testRedis } from '../helpers/redis.js';

/**
 * Clients for the security suites: requests that claim a client IP through X-Forwarded-For (a
 * stack with TRUST_PROXY=true keys its limits by it, so each test spends a budget of its own),
 * logins that respect the per-PIN check limit, sockets, and a wait for idle queues.
 */
let ipCounter = 0;
/** A fresh documentation-range address for each call (RFC 5737), unique within the run. */
export function freshIp(): string {
  ipCounter += 1;
  return `198.51.${100 + Math.floor(ipCounter / 250)}.${(ipCounter % 250) + 1}`;
}

export function postFrom<T = Record<string, unknown>>(base: string, ip: string, path: string, json: unknown, token?: string): Promise<JsonResponse<T>> {
  return request<T>(base, 'POST', path, { json, token, headers: { 'x-forwarded-for': ip } });
}

export const newRegistration = (): { pin: string; emojiString: string } => ({ pin: randomPin(), emojiString: randomEmoji() });

/** Register, chat, then poll check-login about once a second (the per-PIN limit) until verified. */
export async function loginFrom(base: string, ip: string, phone = randomPhone()): Promise<LoginBody> {
  const reg = newRegistration();
  const r = await postFrom(base, ip, '/register-pin', reg);
  expect(r.status, r.text).to.equal(200);
  const hook = await sendChat(base, `PIN: ${reg.emojiString}`, { phone });
  expect(hook.status, hook.text).to.equal(200);
  return eventually(
    async () => {
      const c = await postFrom<LoginBody>(base, ip, '/check-login', { pin: reg.pin });
      if (c.status === 429) return undefined;
      if (c.status !== 200) throw new Error(`check-login ${c.status}: ${c.text}`);
      return c.body.verified ? c.body : undefined;
    },
    15000,
    1100,
  );
}

export async function connectSocket(base: string, ip?: string): Promise<Socket> {
  const socket = io(base, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    extraHeaders: ip ? { 'x-forwarded-for': ip } : {},
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  return socket;
}

/** Waits until the stack's queues have nothing waiting, delayed or running. */
export async function queuesIdle(prefix: string, minCompleted: { inbound?: number } = {}): Promise<void> {
  const redis = testRedis();
  const queues = [QUEUE.inbound, QUEUE.outbound].map((name) => new Queue(name, { connection: redis, prefix: keys(prefix).queuePrefix(name) }));
  try {
    await eventually(async () => {
      const [inbound, outbound] = await Promise.all(queues.map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed')));
      const busy = (c: Record<string, number>): number => (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0);
      if (busy(inbound!) + busy(outbound!) > 0) return undefined;
      return (inbound!.completed ?? 0) >= (minCompleted.inbound ?? 0) ? true : undefined;
    }, 15000);
  } finally {
    await Promise.all(queues.map((q) => q.close()));
    redis.disconnect();
  }
}
