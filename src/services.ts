import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import { Sessions } from './auth/sessions.js';
import { TokenService } from './auth/tokens.js';
import { WebhookAuth } from './messaging/webhook-auth.js';
import type { Logger } from './observability/logger.js';
import { ExpirySchedule } from './queues/expiry-schedule.js';
import { createQueues, type Queues } from './queues/queues.js';
import { createRedis } from './redis/connection.js';
import { keys as makeKeys, type Keys } from './redis/keys.js';
import { Scripts } from './redis/scripts.js';
import { PinHasher } from './registrations/pin.js';
import { Registrations } from './registrations/service.js';
import { Limits } from './security/limits.js';

/**
 * The object graph shared by every role: one fail-fast Redis connection for commands and queue
 * producers, the scripts on it, and the services built from them.
 */
export interface Services {
  config: Config;
  log: Logger;
  redis: Redis;
  keys: Keys;
  scripts: Scripts;
  queues: Queues;
  tokens: TokenService;
  sessions: Sessions;
  registrations: Registrations;
  limits: Limits;
  webhookAuth: WebhookAuth;
  close(): Promise<void>;
}

export function createServices(config: Config, log: Logger, role: string): Services {
  const redis = createRedis(config.redisUrl, 'command', `pinauth:${role}:${config.instanceName}`);
  const keys = makeKeys(config.keyPrefix);
  const scripts = new Scripts(redis);
  const queues = createQueues(redis, keys.bull(), config.outboundAttempts);
  // Without a listener BullMQ prints connection errors as raw stack traces on stderr.
  for (const q of queues.all()) q.on('error', (err) => log.warn('queue connection error', { queue: q.name, error: err.message }));
  const tokens = new TokenService({
    secret: config.jwtSecret,
    issuer: config.jwtIssuer,
    accessTtl: config.accessTokenTtl,
    refreshTtl: config.refreshTokenTtl,
  });
  const registrations = new Registrations(redis, scripts, keys, new PinHasher(config.jwtSecret), new ExpirySchedule(queues.expiry), {
    pinTtlSeconds: config.pinTtlSeconds,
    expiredMemorySeconds: config.expiredMemorySeconds,
  });
  return {
    config,
    log,
    redis,
    keys,
    scripts,
    queues,
    tokens,
    sessions: new Sessions(redis, scripts, keys, tokens),
    registrations,
    limits: new Limits(redis, keys, config.rateLimits),
    webhookAuth: new WebhookAuth({ secret: config.webhookSecret, jwtKey: config.webhookJwtKey }),
    async close() {
      await queues.close().catch(() => undefined);
      redis.disconnect();
    },
  };
}
