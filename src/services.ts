import { ApiKeys } from './accounts/api-keys.js';
import { type AuditEvent, AuditTrail } from './accounts/audit.js';
import { Directory } from './accounts/directory.js';
import { AccountRoles } from './accounts/roles.js';
import { Eraser } from './accounts/erase.js';
import { Exporter } from './accounts/export.js';
import { coreHoldings, type Holding } from './accounts/holdings.js';
import type { Config } from './config.js';
import { Sessions, type RequestMeta, type SessionEvents } from './auth/sessions.js';
import { loadKeyRing } from './auth/key-ring.js';
import { TokenService } from './auth/tokens.js';
import { DeliveryTracker } from './messaging/delivery.js';
import { ChannelHealth } from './messaging/health.js';
import { WebhookAuth } from './messaging/webhook-auth.js';
import type { Logger } from './observability/logger.js';
import { ExpirySchedule } from './queues/expiry-schedule.js';
import { personJobs } from './queues/person-jobs.js';
import { createQueues, type Queues } from './queues/queues.js';
import { connect, type RedisClient } from './redis/connection.js';
import { keys as makeKeys, type Keys } from './redis/keys.js';
import { createReplicaBarrier, type ReplicaBarrier } from './redis/replicas.js';
import { Scripts } from './redis/scripts.js';
import { PinHasher } from './registrations/pin.js';
import { Registrations } from './registrations/service.js';
import { OidcLogins } from './oidc/logins.js';
import { Limits } from './security/limits.js';
import { Probes } from './security/probes.js';

/**
 * The object graph shared by every role: one fail-fast Redis connection for commands and queue
 * producers, the scripts on it, and the services built from them.
 */
export interface Services {
  config: Config;
  log: Logger;
  redis: RedisClient;
  keys: Keys;
  scripts: Scripts;
  queues: Queues;
  tokens: TokenService;
  sessions: Sessions;
  /** the person's OpenID logins (grants, their tokens, provider sessions), ended with a sign-out everywhere */
  oidcLogins: OidcLogins;
  registrations: Registrations;
  limits: Limits;
  /** wrong guesses, collisions and refusals: warn logs now, metrics once the role attaches them */
  probes: Probes;
  webhookAuth: WebhookAuth;
  /** waits for REDIS_WAIT_REPLICAS replicas before a promise is made (no-op when 0) */
  replicas: ReplicaBarrier;
  /** delivery records of outbound messages (GET /messages/:id, status webhooks) */
  delivery: DeliveryTracker;
  /** each channel's health as its gateway reported it, and the number people are sent to */
  health: ChannelHealth;
  /** the audit trail of security-relevant events (docs/accounts.md) */
  audit: AuditTrail;
  /** the admin API's machine credentials (hashed, scoped, revocable) */
  apiKeys: ApiKeys;
  /** who there is: search by identifier or name, newest first (src/accounts/directory.ts) */
  directory: Directory;
  /** a person's roles, changed and audited (src/accounts/roles.ts) */
  roles: AccountRoles;
  /** everything held about a person, one holding per kind, in erase order (accounts/holdings.ts) */
  holdings: Holding[];
  /** erases a person, resumably (accounts/erase.ts) */
  eraser: Eraser;
  /** a person's data as one document (accounts/export.ts) */
  exporter: Exporter;
  /** loads what needs Redis before the first request or job: the generated signing key */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function createServices(config: Config, log: Logger, role: string): Services {
  const redis = connect(config.redis, 'command', `pinauth:${role}:${config.instanceName}`);
  const keys = makeKeys(config.keyPrefix);
  const replicas = createReplicaBarrier(config.redis, {
    ...config.redisWait,
    key: keys.replicaBarrier(),
    name: `pinauth:${role}-wait:${config.instanceName}`,
    warn: (message, meta) => log.warn(message, meta),
  });
  const scripts = new Scripts(redis);
  const queues = createQueues(redis, keys.queuePrefix, config.outboundAttempts, config.inboundPartitions, config.outboundPartitions);
  // Without a listener BullMQ prints connection errors as raw stack traces on stderr.
  for (const q of queues.all()) q.on('error', (err) => log.warn('queue connection error', { queue: q.name, error: err.message }));
  const tokens = new TokenService({
    issuer: config.jwtIssuer,
    accessTtl: config.accessTokenTtl,
    refreshTtl: config.refreshTokenTtl,
    verifiedCache: config.verifiedTokenCache,
  });
  const pinHasher = new PinHasher(config.pinHashKey, config.pinHashPreviousKey);
  const clientNames = new Map((config.oidc?.clients ?? []).map((c) => [c.client_id, typeof c.client_name === 'string' ? c.client_name : c.client_id]));
  const oidcLogins = new OidcLogins(redis, keys, config.refreshTokenTtl, (id) => clientNames.get(id));
  const limits = new Limits(redis, keys, config.rateLimits);
  const probes = new Probes(log);
  const registrations = new Registrations(redis, scripts, keys, pinHasher, new ExpirySchedule(queues.expiry), limits, probes, {
    pinTtlSeconds: config.pinTtlSeconds,
    expiredMemorySeconds: config.expiredMemorySeconds,
    collectRetrySeconds: config.collectRetrySeconds,
    policy: config.registration,
  });
  const audit = new AuditTrail(redis, scripts, keys, config.audit, log, {
    // a live event stream blocks on a connection of its own (GET /admin/api/v1/events/stream)
    connect: () => connect(config.redis, 'worker', `pinauth:audit-stream:${config.instanceName}`),
    max: config.audit.streamsPerNode,
  });
  const sessions = new Sessions(redis, scripts, keys, tokens, config.refreshReuseSeconds, oidcLogins, sessionEvents(audit));
  const directory = new Directory(redis, scripts, keys);
  const holdings = coreHoldings({
    redis,
    keys,
    scripts,
    listSessions: (userId) => sessions.list(userId, ''),
    oidc: oidcLogins,
    // inbound and outbound jobs name people; the expiry queue's hold PIN hashes only
    jobs: personJobs(redis, queues.inbound, queues.outbound),
    directory,
    audit,
  });
  return {
    config,
    log,
    redis,
    keys,
    scripts,
    queues,
    tokens,
    sessions,
    oidcLogins,
    registrations,
    limits,
    probes,
    delivery: new DeliveryTracker(redis, scripts, keys, config.deliveryRecordSeconds),
    health: new ChannelHealth(redis, keys, config.channels, new Map(Object.entries(config.demo.numbers))),
    webhookAuth: new WebhookAuth({
      secret: config.webhookSecret,
      jwtKey: config.webhookJwtKey,
      bearerKey: config.webhookBearerKey,
      pathSecret: config.webhookPathSecret,
    }),
    replicas,
    apiKeys: new ApiKeys(redis, keys, config.audit.days),
    audit,
    directory,
    roles: new AccountRoles(redis, scripts, keys, audit, log),
    holdings,
    eraser: new Eraser(redis, keys, holdings, audit, config.erasureReceiptDays),
    exporter: new Exporter(redis, keys, holdings, audit),
    async ready() {
      tokens.useKeys(await loadKeyRing(config, redis, keys));
    },
    async close() {
      audit.stopFollowing();
      await queues.close().catch(() => undefined);
      replicas.close();
      redis.disconnect();
    },
  };
}

/** Sessions' events into the audit trail: session.ended (how, how many) and refresh.reuse. */
function sessionEvents(audit: AuditTrail): SessionEvents {
  return {
    ended: ({ userId, how, count, sessionId, meta }) =>
      audit.note({
        type: 'session.ended',
        userId,
        ...auditMeta(meta),
        // kind: one app session, or all of the person's (OpenID logins included)
        detail: { how, kind: how === 'everywhere' || how === 'stop' ? 'all' : 'app', sessions: count, ...(sessionId !== undefined ? { sessionId } : {}) },
      }),
    reused: ({ userId, sessionId, meta }) => audit.note({ type: 'refresh.reuse', userId, ...auditMeta(meta), detail: { sessionId } }),
  };
}

function auditMeta(meta: RequestMeta | undefined): Pick<AuditEvent, 'actor' | 'requestId' | 'ipGroup' | 'client'> {
  if (meta === undefined) return {};
  return {
    ...(meta.actor !== undefined ? { actor: meta.actor } : {}),
    ...(meta.requestId !== undefined ? { requestId: meta.requestId } : {}),
    ...(meta.ipGroup !== undefined ? { ipGroup: meta.ipGroup } : {}),
    ...(meta.client !== undefined ? { client: meta.client } : {}),
  };
}
