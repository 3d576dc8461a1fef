import { randomBytes } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import { LoginProcessor, type LoginOutcome } from '../../src/auth/login.js';
import { redisAdapterFactory } from '../../src/oidc/adapter.js';
import type { InboundJob, InboundMessage } from '../../src/queues/jobs.js';
import type { Caller } from '../../src/registrations/service.js';
import type { Services } from '../../src/services.js';
import { randomEmoji, randomPin } from '../helpers/flow.js';

export const me: Caller = { ip: '127.0.0.1', via: 'http' };
export const newLid = (): string => String(100000000000000 + Math.floor(Math.random() * 8e14));
export const newBsuid = (): string => `US.${randomBytes(8).readBigUInt64BE()}`;
export const digits = (phone: string): string => phone.replace(/^\+/, '');

/**
 * Every key under the prefix whose name or value (string, hash, set, sorted set, list, stream)
 * holds one of the needles, on every primary: the test's own walk, independent of the erase's.
 */
export async function leftovers(redis: Redis | Cluster, prefix: string, needles: readonly string[]): Promise<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const hits: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, names] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      for (const name of names) {
        const type = await node.type(name);
        let values: string[] = [];
        if (type === 'string') values = [(await node.get(name)) ?? ''];
        else if (type === 'hash') values = Object.entries(await node.hgetall(name)).flat();
        else if (type === 'set') values = await node.smembers(name);
        else if (type === 'zset') values = await node.zrange(name, '0', '-1');
        else if (type === 'list') values = await node.lrange(name, 0, -1);
        else if (type === 'stream') values = (await node.xrange(name, '-', '+')).flatMap(([id, kv]) => [id, ...kv]);
        const text = [name, ...values].join('\n');
        for (const n of needles) if (text.includes(n)) hits.push(`${name} (${type}) holds ${n}`);
      }
    } while (cursor !== '0');
  }
  return hits;
}

/** The login chain in this process (one step per call on a cluster), as the inbound worker runs it. */
export function loginProcessor(services: Services): LoginProcessor {
  return new LoginProcessor(services.scripts, services.keys, services.tokens, services.sessions, {
    graceSeconds: 120,
    confirm: false,
    stepwise: services.config.redis.kind === 'cluster',
  });
}

/** A registration and the chat message with its code from `sender`, through the chain: the outcome (not collected). */
export async function chatLogin(services: Services, sender: Partial<InboundMessage>): Promise<LoginOutcome> {
  const emoji = randomEmoji(8);
  await services.registrations.register(randomPin(), emoji, me);
  const job: InboundJob = {
    message: { provider: 'evolution', id: randomPin().slice(4), phone: null, text: `PIN: ${emoji}`, displayName: 'Erin Erase', ...sender },
    nonce: randomPin(),
    receivedAt: Date.now(),
  };
  return loginProcessor(services).process(job);
}

/** What the OpenID provider writes for one login of `userId` through its adapter: a grant, a provider session, a code and an access token. */
export async function openIdLogin(services: Services, userId: string, clientId = 'erase-app'): Promise<string> {
  const adapter = redisAdapterFactory(services.redis, services.keys, services.oidcLogins);
  const now = Math.floor(Date.now() / 1000);
  const grantId = randomBytes(12).toString('base64url');
  await adapter('Grant').upsert(grantId, { accountId: userId, clientId, iat: now, exp: now + 3600, jti: grantId }, 3600);
  await adapter('Session').upsert(
    randomBytes(12).toString('base64url'),
    {
      accountId: userId,
      uid: randomBytes(8).toString('base64url'),
      loginTs: now,
      authorizations: { [clientId]: { grantId } },
    },
    3600,
  );
  await adapter('AuthorizationCode').upsert(randomBytes(12).toString('base64url'), { accountId: userId, grantId, clientId, iat: now }, 600);
  await adapter('AccessToken').upsert(randomBytes(12).toString('base64url'), { accountId: userId, grantId, clientId, iat: now }, 3600);
  // an interaction that signed them in names the account in its result
  await adapter('Interaction').upsert(randomBytes(12).toString('base64url'), { result: { login: { accountId: userId } }, iat: now }, 600);
  return grantId;
}

/** Waits until no inbound or outbound job is waiting, delayed or active (bounded). */
export async function queuesIdle(services: Services, timeoutMs = 10000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const counts = await Promise.all(
      [...services.queues.inbound, ...services.queues.outbound].map((q) => q.getJobCounts('wait', 'active', 'delayed', 'prioritized')),
    );
    if (counts.every((c) => Object.values(c).every((n) => n === 0))) return;
    if (Date.now() > until) throw new Error(`queues not idle: ${JSON.stringify(counts)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
