import { LoginProcessor } from '../../src/auth/login.js';
import type { InboundJob } from '../../src/queues/jobs.js';
import type { Caller } from '../../src/registrations/service.js';
import type { Services } from '../../src/services.js';
import { randomEmoji, randomPhone, randomPin } from './flow.js';

const me: Caller = { ip: '127.0.0.1', via: 'http' };

/** Runs `fn` over 0 … n-1 with `width` in flight. */
async function lanes(n: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(width, n) }, lane));
}

/**
 * Logins made by the service's own code in this process, without HTTP or queues: `n`
 * registrations, then `n` chat messages through the worker's LoginProcessor (claim, tokens,
 * completion), `width` at a time, one step per call on a cluster. For the key spread of real
 * logins and for the login chain's throughput on a cluster against one server.
 */
export async function driveLogins(services: Services, n: number, width = 64): Promise<{ loginMs: number; loggedIn: number }> {
  const logins = new LoginProcessor(services.scripts, services.keys, services.tokens, services.sessions, {
    graceSeconds: 120,
    confirm: false,
    stepwise: services.config.redis.kind === 'cluster',
  });
  const emojis: string[] = new Array<string>(n);
  await lanes(n, width, async (i) => {
    emojis[i] = randomEmoji(8);
    await services.registrations.register(randomPin(), emojis[i]!, me);
  });
  let loggedIn = 0;
  const started = performance.now();
  await lanes(n, width, async (i) => {
    const job: InboundJob = {
      message: { provider: 'evolution', id: `drive-${randomPin()}`, phone: randomPhone(), text: `PIN: ${emojis[i]}`, displayName: 'Load Test' },
      nonce: randomPin(),
      receivedAt: Date.now(),
    };
    if ((await logins.process(job)).outcome === 'logged-in') loggedIn++;
  });
  return { loginMs: performance.now() - started, loggedIn };
}
