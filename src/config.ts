import os from 'node:os';

/**
 * The one typed, validated view of the environment. Every variable the service reads is
 * parsed here, once, at start; a bad value stops the process with one clear line.
 */

export type MessagingProviderName = 'log' | 'evolution' | 'cloud';

export interface RateLimitConfig {
  /** registrations per IP per minute */
  registerPerMinute: number;
  /** check-login calls per IP per minute */
  checkPerMinute: number;
  /** check-login calls of one PIN per second (bucket refill) */
  checkPinPerSecond: number;
  /** burst allowance for checks of one PIN */
  checkPinBurst: number;
  /** checks of unknown PINs per IP per 10 minutes */
  unknownPinPer10Minutes: number;
  /** send-message calls per user per minute */
  sendPerMinute: number;
  /** chat replies per phone per minute */
  replyPerMinute: number;
  /** socket events per connection per second */
  socketEventsPerSecond: number;
}

export interface Config {
  nodeEnv: string;
  production: boolean;
  port: number;
  redisUrl: string;
  keyPrefix: string;
  jwtSecret: string;
  jwtIssuer: string;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  pinTtlSeconds: number;
  /** how long a verified result stays collectable after the login, at least */
  verifiedGraceSeconds: number;
  /** how long an expired PIN is remembered (answers 410 rather than 404) */
  expiredMemorySeconds: number;
  instanceName: string;
  webhookSecret: string | undefined;
  webhookJwtKey: string | undefined;
  webhookVerifyToken: string | undefined;
  messagingProvider: MessagingProviderName;
  evolution: { url: string | undefined; apiKey: string | undefined; instance: string | undefined };
  cloud: { token: string | undefined; phoneNumberId: string | undefined; graphApiUrl: string };
  outboundTimeoutMs: number;
  outboundPerSecond: number;
  outboundAttempts: number;
  replies: { enabled: boolean; signedIn: string; unknownCode: string };
  adminUser: string | undefined;
  adminPassword: string | undefined;
  metricsToken: string | undefined;
  trustProxy: boolean;
  corsOrigins: string[];
  logLevel: string;
  rateLimits: RateLimitConfig;
  inboundConcurrency: number;
  /** BullMQ stalled-job check interval; lower finds jobs of a killed worker sooner */
  stalledIntervalMs: number;
  shutdownTimeoutMs: number;
  /** how often each process writes its metrics snapshot to Redis */
  metricsIntervalMs: number;
}

export class ConfigError extends Error {}

const DEV_JWT_SECRET = 'pin-auth-development-secret-do-not-use-in-production';
const LOG_LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'];

type Env = Record<string, string | undefined>;

function str(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw.replace(/\/+$/, '');
}

/** Parses and validates an environment. Throws ConfigError with one line on the first problem. */
export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = str(env, 'NODE_ENV') ?? 'development';
  const production = nodeEnv === 'production';

  const keyPrefix = str(env, 'KEY_PREFIX') ?? 'pinauth';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(keyPrefix)) {
    throw new ConfigError('KEY_PREFIX must be 1 to 64 characters of letters, digits, _ . or -');
  }

  let jwtSecret = str(env, 'JWT_SECRET');
  if (jwtSecret === undefined) {
    if (production) throw new ConfigError('JWT_SECRET is required when NODE_ENV=production');
    jwtSecret = DEV_JWT_SECRET;
  } else if (jwtSecret.length < 32) {
    throw new ConfigError('JWT_SECRET must be at least 32 characters');
  }

  const webhookSecret = str(env, 'WEBHOOK_SECRET');
  const webhookJwtKey = str(env, 'WEBHOOK_JWT_KEY');
  if (production && webhookSecret === undefined && webhookJwtKey === undefined) {
    throw new ConfigError(
      'WEBHOOK_SECRET or WEBHOOK_JWT_KEY is required when NODE_ENV=production (an open webhook lets anyone sign in as anyone)',
    );
  }

  const provider = str(env, 'MESSAGING_PROVIDER') ?? 'log';
  if (provider !== 'log' && provider !== 'evolution' && provider !== 'cloud') {
    throw new ConfigError(`MESSAGING_PROVIDER must be log, evolution or cloud, got "${provider}"`);
  }
  const evolution = {
    url: url(env, 'EVOLUTION_API_URL', ['http:', 'https:']),
    apiKey: str(env, 'EVOLUTION_API_KEY'),
    instance: str(env, 'EVOLUTION_INSTANCE'),
  };
  if (provider === 'evolution' && (!evolution.url || !evolution.apiKey || !evolution.instance)) {
    throw new ConfigError(
      'MESSAGING_PROVIDER=evolution needs EVOLUTION_API_URL, EVOLUTION_API_KEY and EVOLUTION_INSTANCE',
    );
  }
  const cloud = {
    token: str(env, 'WHATSAPP_TOKEN'),
    phoneNumberId: str(env, 'WHATSAPP_PHONE_NUMBER_ID'),
    graphApiUrl: url(env, 'GRAPH_API_URL', ['http:', 'https:']) ?? 'https://graph.facebook.com/v21.0',
  };
  if (provider === 'cloud' && (!cloud.token || !cloud.phoneNumberId)) {
    throw new ConfigError('MESSAGING_PROVIDER=cloud needs WHATSAPP_TOKEN and WHATSAPP_PHONE_NUMBER_ID');
  }

  const adminUser = str(env, 'ADMIN_USER');
  const adminPassword = str(env, 'ADMIN_PASSWORD');
  if (adminPassword !== undefined && adminUser === undefined) {
    throw new ConfigError('ADMIN_PASSWORD is set but ADMIN_USER is not');
  }

  const logLevel = str(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }

  // Heroku Redis may set both; REDIS_TLS_URL is then the encrypted door to the same server.
  const redisUrl =
    url(env, 'REDIS_TLS_URL', ['redis:', 'rediss:']) ??
    url(env, 'REDIS_URL', ['redis:', 'rediss:']) ??
    'redis://127.0.0.1:6379';

  const pinTtlSeconds = int(env, 'PIN_TTL_SECONDS', 180, 1, 86400);

  return {
    nodeEnv,
    production,
    port: int(env, 'PORT', 3000, 0, 65535),
    redisUrl,
    keyPrefix,
    jwtSecret,
    jwtIssuer: str(env, 'JWT_ISSUER') ?? 'pin-auth',
    accessTokenTtl: int(env, 'ACCESS_TOKEN_TTL', 900, 1, 86400 * 7),
    refreshTokenTtl: int(env, 'REFRESH_TOKEN_TTL', 2592000, 1, 86400 * 365),
    pinTtlSeconds,
    verifiedGraceSeconds: int(env, 'VERIFIED_GRACE_SECONDS', 60, 1, 3600),
    expiredMemorySeconds: int(env, 'EXPIRED_MEMORY_SECONDS', 3600, 1, 86400 * 7),
    instanceName: str(env, 'INSTANCE_NAME') ?? str(env, 'DYNO') ?? os.hostname(),
    webhookSecret,
    webhookJwtKey,
    webhookVerifyToken: str(env, 'WEBHOOK_VERIFY_TOKEN'),
    messagingProvider: provider,
    evolution,
    cloud,
    outboundTimeoutMs: int(env, 'OUTBOUND_TIMEOUT_MS', 10000, 100, 120000),
    outboundPerSecond: int(env, 'OUTBOUND_PER_SECOND', 20, 1, 10000),
    outboundAttempts: int(env, 'OUTBOUND_ATTEMPTS', 8, 1, 50),
    replies: {
      enabled: bool(env, 'CHAT_REPLIES', true),
      signedIn: str(env, 'REPLY_SIGNED_IN') ?? "You're signed in.",
      unknownCode: str(env, 'REPLY_UNKNOWN_CODE') ?? 'That code is unknown or has expired. Please request a new one in the app.',
    },
    adminUser,
    adminPassword,
    metricsToken: str(env, 'METRICS_TOKEN'),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    corsOrigins: (str(env, 'CORS_ORIGINS') ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter((o) => o !== ''),
    logLevel,
    rateLimits: {
      registerPerMinute: int(env, 'RATE_REGISTER_PER_MINUTE', 30, 1, 1e6),
      checkPerMinute: int(env, 'RATE_CHECK_PER_MINUTE', 120, 1, 1e6),
      checkPinPerSecond: int(env, 'RATE_CHECK_PIN_PER_SECOND', 1, 1, 1e6),
      checkPinBurst: int(env, 'RATE_CHECK_PIN_BURST', 2, 1, 1e6),
      unknownPinPer10Minutes: int(env, 'RATE_UNKNOWN_PIN_PER_10_MINUTES', 30, 1, 1e6),
      sendPerMinute: int(env, 'RATE_SEND_PER_MINUTE', 30, 1, 1e6),
      replyPerMinute: int(env, 'RATE_REPLY_PER_MINUTE', 5, 1, 1e6),
      socketEventsPerSecond: int(env, 'RATE_SOCKET_EVENTS_PER_SECOND', 20, 1, 1e6),
    },
    inboundConcurrency: int(env, 'INBOUND_CONCURRENCY', 64, 1, 1000),
    stalledIntervalMs: int(env, 'STALLED_INTERVAL_MS', 30000, 500, 600000),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 25000, 100, 600000),
    metricsIntervalMs: int(env, 'METRICS_INTERVAL_MS', 5000, 100, 600000),
  };
}

export const DEV_SECRET_IN_USE = (c: Config): boolean => c.jwtSecret === DEV_JWT_SECRET;
