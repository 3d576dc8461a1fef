import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import { CATALOGUE, DEFAULT_REPLY_KINDS, LANGUAGES, REPLY_KINDS, type ChatTexts, type Language, type ReplyKind } from './chat-catalogue.js';
import { isSupportedCountry } from 'libphonenumber-js';
import { hostAllowed } from './allowed-hosts.js';
import { parseKeySet, type KeyMaterial, type SigningAlg } from './key-material.js';

/**
 * Access tokens already verified, by their exact text: an app polls /profile (and the other
 * protected endpoints) with the same token until it expires, and the signature check is most
 * of such a request's CPU (docs/benchmark.md, "Optimisations kept"). Bounded: by default at most this many
 * (VERIFIED_TOKEN_CACHE), least recently used first out (the claims and the token string as the
 * key: about 0.9 KB for an ES256 token, measured, ≈ 9 MB for 10,000). Only the signature
 * and the claims' shape are remembered; time (exp, nbf) and type are checked on every use, and
 * the session is still read from Redis by whoever needs it open (auth/sessions.ts), so a closed
 * session is refused at once.
 */
export const VERIFIED_ACCESS_TOKENS = 10_000;

/**
 * The one typed, validated view of the environment. Every variable the service reads is
 * parsed here, once, at start; a bad value stops the process with one clear line.
 */

export type MessagingProviderName = 'log' | 'evolution' | 'cloud';
export type GatewayName = 'evolution' | 'cloud';
/** Evolution API's outbound request shape: v1 `{number, textMessage: {text}}`, v2 `{number, text}`. */
export type EvolutionApiVersion = 'v1' | 'v2';

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
  /** chat messages (codes, answers, commands) one sender may send per minute (SENDER_MESSAGES_PER_MINUTE; 0: no limit) */
  senderMessagesPerMinute: number;
  /** socket events per connection per second */
  socketEventsPerSecond: number;
  /** wrong admin / metrics credentials per IP group per 15 minutes before 429 */
  adminFailuresPer15Minutes: number;
  /** admin API requests per actor (an admin, an API key) per minute */
  adminActionsPerMinute: number;
  /** OpenID authorization and pushed authorization requests per IP group per minute */
  oidcAuthorizePerMinute: number;
  /** OpenID sign-in page views and status polls per IP group per minute */
  oidcInteractionPerMinute: number;
  /** per-IP budgets group IPv6 addresses by this prefix length (IPv4: one address each) */
  ipv6PrefixLength: number;
}

/** Who picks the emoji string: `client` (the client may, else the server) or `server` (always). */
export type EmojiChoice = 'client' | 'server';

export interface RegistrationPolicy {
  emojiChoice: EmojiChoice;
  /** emoji in a string the server draws */
  emojiLength: number;
  /** least estimated strength of a PIN, in bits (0: only the 4-character minimum) */
  pinMinBits: number;
}

export interface RedisAddress {
  host: string;
  port: number;
}

/** Credentials of the data nodes (sentinel and cluster modes; a single Redis takes them from its URL). */
export interface RedisAuth {
  username: string | undefined;
  password: string | undefined;
}

/**
 * Where Redis is: one server (REDIS_URL), a primary found through Sentinel (REDIS_SENTINELS), or a
 * Redis Cluster (REDIS_CLUSTER_NODES). Only the connection layer (src/redis/connection.ts) reads it.
 */
export type RedisTopology = (
  | { kind: 'single'; url: string }
  | ({ kind: 'sentinel'; sentinels: RedisAddress[]; name: string; sentinelPassword: string | undefined } & RedisAuth)
  | ({ kind: 'cluster'; nodes: RedisAddress[] } & RedisAuth)
) & {
  /**
   * How long a request's command may wait for Redis before the request answers 503
   * (REDIS_COMMAND_TIMEOUT_MS); workers and subscribers wait for ever.
   */
  commandTimeoutMs: number;
};

export interface Config {
  nodeEnv: string;
  production: boolean;
  port: number;
  /** HOST: the address the web server listens on; undefined: every interface (production's default) */
  host: string | undefined;
  /** ALLOWED_HOSTS: the host names a request's `Host` may name (lower case); empty: any (allowed-hosts.ts) */
  allowedHosts: string[];
  /** the single server's URL (also set, unused, in sentinel and cluster modes) */
  redisUrl: string;
  redis: RedisTopology;
  /**
   * Replicas that must hold an accepted webhook (and a login's session) before the service
   * answers for it (Redis WAIT); 0 = asynchronous replication only.
   */
  redisWait: { replicas: number; timeoutMs: number };
  keyPrefix: string;
  /** HS256 secret (HS256 mode), and the PIN-hash key when PIN_HASH_KEY is unset */
  jwtSecret: string;
  /** the algorithm tokens are signed with: the active key's when JWT_KEYS is set */
  jwtAlgorithm: SigningAlg;
  /** configured signing keys (JWT_KEYS / JWT_KEYS_FILE); empty: one is generated and kept in Redis */
  jwtKeys: KeyMaterial[];
  /** kid of the configured key that signs; the others only verify */
  jwtActiveKid: string | undefined;
  jwtIssuer: string;
  /** keys the PIN hashes: current, and the previous one still honoured during a rotation */
  pinHashKey: string;
  pinHashPreviousKey: string | undefined;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  /** access tokens a web node remembers as verified (least recently used out); 0: none */
  verifiedTokenCache: number;
  pinTtlSeconds: number;
  /** how long /health's activePins figure stands before it is counted again (ACTIVE_PINS_REFRESH_SECONDS) */
  activePinsRefreshSeconds: number;
  registration: RegistrationPolicy;
  /** how long a verified result stays collectable after the login, at least */
  verifiedGraceSeconds: number;
  /** how long an expired PIN is remembered (answers 410 rather than 404) */
  expiredMemorySeconds: number;
  /**
   * the audit trail (docs/accounts.md): its retention, AUDIT_RETENTION_DAYS and AUDIT_MAX_EVENTS,
   * whichever is reached first; live event streams open at once per web node
   * (AUDIT_STREAMS_PER_NODE) and the seconds between their heartbeats (AUDIT_STREAM_HEARTBEAT_SECONDS)
   */
  audit: { days: number; maxEvents: number; streamsPerNode: number; heartbeatSeconds: number };
  /** ERASURE_RECEIPT_DAYS: how long an erase's receipt (no personal data) is kept (docs/accounts.md, "Erase") */
  erasureReceiptDays: number;
  /** a collected login can be collected again by a retry (same tokens) for this long */
  collectRetrySeconds: number;
  /** a refresh token presented again this soon after its rotation gets the same new pair */
  refreshReuseSeconds: number;
  /** how long a send-message Idempotency-Key is remembered */
  idempotencyKeySeconds: number;
  /** how long an inbound message id is remembered against a gateway's redelivery (the `msg:` key) */
  messageIdSeconds: number;
  /** how long an outbound message's delivery record (`out:`, its gateway-id links) is kept */
  deliveryRecordSeconds: number;
  instanceName: string;
  webhookSecret: string | undefined;
  webhookJwtKey: string | undefined;
  /** static `Authorization: Bearer <key>` (Evolution 2.1–2.2 static headers) */
  webhookBearerKey: string | undefined;
  /** secret path segment: `/messaging-endpoint/<secret>[/<event>]` (Evolution's global webhook) */
  webhookPathSecret: string | undefined;
  webhookVerifyToken: string | undefined;
  /** what the webhook lets strangers cost a web node (security/webhook-admission.ts) */
  webhookLimits: {
    /** webhook requests in flight at once from one IP group */
    inFlightPerIp: number;
    /** bytes of signed bodies held while they are read, before their HMAC is checked, per node (an eighth per IP group) */
    unverifiedBytes: number;
  };
  /** a request's head and body must have arrived this long after it began, or its connection is closed */
  requestTimeoutMs: number;
  /** the first of MESSAGING_PROVIDER (`log` when no gateway is configured) */
  messagingProvider: MessagingProviderName;
  /** the gateways MESSAGING_PROVIDER names, in its order (empty: the log provider) */
  gateways: GatewayName[];
  /**
   * Every configured channel (`evolution:<instance>`, `cloud:<phone_number_id>`, or `log`),
   * the default first: the one /send-message uses when it names none.
   */
  channels: string[];
  defaultChannel: string;
  evolution: {
    url: string | undefined;
    apiKey: string | undefined;
    /** the first of `instances` */
    instance: string | undefined;
    instances: string[];
    apiVersion: EvolutionApiVersion;
  };
  cloud: {
    token: string | undefined;
    /** the first of `phoneNumberIds` */
    phoneNumberId: string | undefined;
    phoneNumberIds: string[];
    graphApiUrl: string;
  };
  outboundTimeoutMs: number;
  outboundPerSecond: number;
  outboundAttempts: number;
  replies: ChatConfig;
  /** ask the person in the chat (YES / NO) before a matched code signs anyone in */
  loginConfirmation: boolean;
  adminUser: string | undefined;
  adminPassword: string | undefined;
  metricsToken: string | undefined;
  trustProxy: boolean;
  corsOrigins: string[];
  /** open Socket.IO connections one IP group may hold on one web node (SOCKETS_PER_IP) */
  socketsPerIp: number;
  logLevel: string;
  rateLimits: RateLimitConfig;
  inboundConcurrency: number;
  /** inbound queues, one slot each on a cluster (queues/partitions.ts) */
  inboundPartitions: number;
  /** outbound queues, one slot each on a cluster (queues/partitions.ts); default: as many as inbound */
  outboundPartitions: number;
  /** longest wait between two attempts of an inbound job while Redis is at fault (queues/inbound-retry.ts) */
  inboundRetryMaxMs: number;
  /** BullMQ stalled-job check interval; lower finds jobs of a killed worker sooner */
  stalledIntervalMs: number;
  shutdownTimeoutMs: number;
  /** how often each process writes its metrics snapshot to Redis */
  metricsIntervalMs: number;
  /**
   * the login page at `/` (DEMO_PAGE) and the chat number it links to (WHATSAPP_NUMBER, digits
   * only); `numbers`: each channel's number (WHATSAPP_NUMBERS `channel=number` pairs; else
   * WHATSAPP_NUMBER is the default channel's), the page and register-pin name a healthy one
   */
  demo: { enabled: boolean; whatsappNumber: string | undefined; numbers: Record<string, string> };
  /** the OpenID Connect provider, when clients are configured */
  oidc: OidcConfig | undefined;
  /** the sender countries served (SENDER_COUNTRIES_ALLOW) or refused (SENDER_COUNTRIES_DENY); undefined: all */
  senderCountries: SenderCountries | undefined;
}

/** An allow or a deny list of sender countries (ISO 3166 alpha-2, upper case). */
export interface SenderCountries {
  mode: 'allow' | 'deny';
  countries: ReadonlySet<string>;
}

/** An OpenID Connect client as oidc-provider takes it (client_id, redirect_uris, …). */
export type OidcClientMetadata = { client_id: string; redirect_uris: string[] } & Record<string, unknown>;

export interface OidcConfig {
  /** the issuer URL; the provider is served under its path */
  issuer: string;
  mountPath: string;
  clients: OidcClientMetadata[];
  /** signs the provider's cookies (first signs, all verify); derived from PIN_HASH_KEY when unset */
  cookieKeys: string[] | undefined;
}

/** The chat side: whether to reply, the product name and time zone shown, the texts. */
export interface ChatConfig {
  enabled: boolean;
  appName: string;
  language: Language;
  /** IANA zone of the time in the confirmation question */
  timeZone: string;
  texts: ChatTexts;
  /** the reply kinds sent (CHAT_REPLY_KINDS); a kind not in it is not sent, the login goes on */
  kinds: ReadonlySet<ReplyKind>;
  /** replies per recipient country per UTC day before they stop for that country (REPLY_DAILY_CAP_PER_COUNTRY; 0: no cap) */
  dailyCapPerCountry: number;
}

export class ConfigError extends Error {
  /** every problem found, one sentence each (the message joins them) */
  readonly problems: string[];
  constructor(problems: string | string[]) {
    const list = typeof problems === 'string' ? [problems] : problems;
    super(list.join('; '));
    this.problems = list;
  }
}

/**
 * The problems of the loadConfig running now (it is synchronous): each is noted and loading goes
 * on with the default, so one run names them all (`check.js config` lists them).
 */
let noted: string[] | undefined;
function problem(message: string): void {
  if (noted === undefined) throw new ConfigError(message);
  noted.push(message);
}
/** One part of the configuration: its problems are noted, and `fallback` stands in for it. */
function part<T>(read: () => T, fallback: () => T): T {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const p of err.problems) problem(p);
    return fallback();
  }
}

/**
 * Retry windows no longer than the command timeout, each as a warning: a 503 after the timeout
 * may hide a write that was done, and the retry that follows must still find its result
 * (docs/operations.md, "Timeouts and retries"). Tests shorten them on purpose, so not refused.
 */
export function shortRetryWindows(config: Pick<Config, 'redis' | 'collectRetrySeconds' | 'refreshReuseSeconds'>): string[] {
  const windows = [
    ['COLLECT_RETRY_SECONDS', config.collectRetrySeconds],
    ['REFRESH_REUSE_SECONDS', config.refreshReuseSeconds],
  ] as const;
  return windows
    .filter(([, seconds]) => seconds > 0 && seconds * 1000 <= config.redis.commandTimeoutMs)
    .map(
      ([name, seconds]) =>
        `${name} (${seconds} s) is not longer than REDIS_COMMAND_TIMEOUT_MS (${config.redis.commandTimeoutMs} ms): ` +
        'a retry after a late answer may find nothing',
    );
}

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
  if (!/^\d+$/.test(raw)) {
    problem(`${name} must be a whole number, got "${raw}"`);
    return def;
  }
  const n = Number(raw);
  if (n < min || n > max) {
    problem(`${name} must be between ${min} and ${max}, got ${n}`);
    return def;
  }
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = str(env, name);
  if (raw === undefined) return def;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  problem(`${name} must be true or false, got "${raw}"`);
  return def;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    problem(`${name} is not a valid URL`);
    return undefined;
  }
  if (!protocols.includes(parsed.protocol)) {
    problem(`${name} must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
    return undefined;
  }
  return raw.replace(/\/+$/, '');
}

/** A DNS name (`localhost`, `auth.example.com`): letters, digits and hyphens in dot-separated labels. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/**
 * HOST, where the web server listens: an address or a name of this machine; loopback
 * (127.0.0.1) by default outside production, so a laptop's instance (its webhook is open in
 * development) can't be reached from the network; every interface in production. ALLOWED_HOSTS,
 * comma-separated host names without a port.
 */
function listenSettings(env: Env, production: boolean): { host: string | undefined; allowedHosts: string[] } {
  const given = str(env, 'HOST')?.replace(/^\[(.*)\]$/, '$1');
  if (given !== undefined && isIP(given) === 0 && !HOST_NAME.test(given)) {
    throw new ConfigError(`HOST must be an IP address or a host name of this machine (e.g. 127.0.0.1, 0.0.0.0, ::), got "${given}"`);
  }
  const allowedHosts = (str(env, 'ALLOWED_HOSTS') ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');
  for (const h of allowedHosts) {
    if (isIP(h) === 0 && !HOST_NAME.test(h))
      throw new ConfigError(`ALLOWED_HOSTS must list host names without scheme or port (e.g. auth.example.com,localhost), got "${h}"`);
  }
  return { host: given ?? (production ? undefined : '127.0.0.1'), allowedHosts };
}

/** Variables that replace one catalogue text each. */
const REPLY_VARIABLES: Record<keyof ChatTexts, string> = {
  signedIn: 'REPLY_SIGNED_IN',
  undoHint: 'REPLY_UNDO_HINT',
  unknownCode: 'REPLY_UNKNOWN_CODE',
  confirm: 'REPLY_CONFIRM',
  whichOne: 'REPLY_WHICH_ONE',
  denied: 'REPLY_DENIED',
  nothingToConfirm: 'REPLY_NOTHING_TO_CONFIRM',
  signedOut: 'REPLY_SIGNED_OUT',
  cannotSignIn: 'REPLY_CANNOT_SIGN_IN',
  slowDown: 'REPLY_SLOW_DOWN',
  countryNotServed: 'REPLY_COUNTRY_NOT_SERVED',
  blocked: 'REPLY_BLOCKED',
  yesButton: 'REPLY_YES_BUTTON',
  noButton: 'REPLY_NO_BUTTON',
  relayed: 'REPLY_RELAYED',
  help: 'REPLY_HELP',
  sessions: 'REPLY_SESSIONS',
  noSessions: 'REPLY_NO_SESSIONS',
  sessionItem: 'REPLY_SESSION_ITEM',
  oidcItem: 'REPLY_OIDC_ITEM',
  eraseConfirm: 'REPLY_ERASE_CONFIRM',
  erased: 'REPLY_ERASED',
  nothingToErase: 'REPLY_NOTHING_TO_ERASE',
  eraseBlocked: 'REPLY_ERASE_BLOCKED',
  noAccount: 'REPLY_NO_ACCOUNT',
};

/**
 * A time zone Intl.DateTimeFormat accepts. Building a DateTimeFormat maps ≈ 8 MB of ICU's locale
 * and calendar data into every process at start (measured on the web role: RSS 99.5 → 90.8 MB),
 * which only the worker's chat replies use. The canonical list and UTC answer without it;
 * aliases (US/Eastern, Asia/Kolkata) still go through a DateTimeFormat.
 */
function isTimeZone(zone: string): boolean {
  if (zone === 'UTC' || Intl.supportedValuesOf('timeZone').includes(zone)) return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function chatConfig(env: Env): ChatConfig {
  const language = str(env, 'CHAT_LANGUAGE') ?? 'en';
  if (!(LANGUAGES as readonly string[]).includes(language)) {
    throw new ConfigError(`CHAT_LANGUAGE must be one of ${LANGUAGES.join(', ')}, got "${language}"`);
  }
  const timeZone = str(env, 'CHAT_TIME_ZONE') ?? 'UTC';
  if (!isTimeZone(timeZone)) {
    throw new ConfigError(`CHAT_TIME_ZONE must be an IANA time zone such as Europe/Lisbon, got "${timeZone}"`);
  }
  const base = CATALOGUE[language as Language];
  const texts = { ...base };
  for (const [field, name] of Object.entries(REPLY_VARIABLES) as Array<[keyof ChatTexts, string]>) {
    texts[field] = str(env, name) ?? base[field];
  }
  for (const field of ['yesButton', 'noButton'] as const) {
    if ([...texts[field]].length > 20) throw new ConfigError(`${REPLY_VARIABLES[field]} must be at most 20 characters (a WhatsApp reply button's title)`);
  }
  return {
    enabled: bool(env, 'CHAT_REPLIES', true),
    appName: str(env, 'APP_NAME') ?? 'pin-auth',
    language: language as Language,
    timeZone,
    texts,
    kinds: replyKinds(env),
    dailyCapPerCountry: int(env, 'REPLY_DAILY_CAP_PER_COUNTRY', 0, 0, 1e9),
  };
}

/** CHAT_REPLY_KINDS: `all`, `none`, or a comma-separated list of REPLY_KINDS; absent: the default. */
function replyKinds(env: Env): ReadonlySet<ReplyKind> {
  const raw = str(env, 'CHAT_REPLY_KINDS')?.toLowerCase();
  if (raw === undefined) return new Set(DEFAULT_REPLY_KINDS);
  if (raw === 'all') return new Set(REPLY_KINDS);
  if (raw === 'none') return new Set();
  const kinds = new Set<ReplyKind>();
  for (const item of raw
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '')) {
    if (!(REPLY_KINDS as readonly string[]).includes(item)) {
      throw new ConfigError(`CHAT_REPLY_KINDS: unknown reply kind "${item}"; the kinds are ${REPLY_KINDS.join(', ')} (or all, none)`);
    }
    kinds.add(item as ReplyKind);
  }
  return kinds;
}

/** `host:port,host:port` (REDIS_SENTINELS, REDIS_CLUSTER_NODES). */
function addresses(env: Env, name: string): RedisAddress[] | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  return raw.split(',').map((part) => {
    const m = /^\s*(\[[0-9a-fA-F:]+\]|[^\s:]+):(\d{1,5})\s*$/.exec(part);
    const port = m ? Number(m[2]) : 0;
    if (!m || port < 1 || port > 65535) throw new ConfigError(`${name} must be a comma-separated list of host:port, got "${part.trim()}"`);
    return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
  });
}

function redisTopology(env: Env, redisUrl: string): RedisTopology {
  const sentinels = addresses(env, 'REDIS_SENTINELS');
  const nodes = addresses(env, 'REDIS_CLUSTER_NODES');
  if (sentinels && nodes) throw new ConfigError('REDIS_SENTINELS and REDIS_CLUSTER_NODES are exclusive: set one');
  const auth: RedisAuth = { username: str(env, 'REDIS_USERNAME'), password: str(env, 'REDIS_PASSWORD') };
  // read whatever the mode, so a listing of the variables this module reads finds them
  const name = str(env, 'REDIS_SENTINEL_NAME') ?? 'mymaster';
  const sentinelPassword = str(env, 'REDIS_SENTINEL_PASSWORD');
  const commandTimeoutMs = int(env, 'REDIS_COMMAND_TIMEOUT_MS', 2000, 100, 60_000);
  const place = sentinels
    ? ({ kind: 'sentinel', sentinels, name, sentinelPassword, ...auth } as const)
    : nodes
      ? ({ kind: 'cluster', nodes, ...auth } as const)
      : ({ kind: 'single', url: redisUrl } as const);
  return { ...place, commandTimeoutMs };
}

function secret(env: Env, name: string): string | undefined {
  const v = str(env, name);
  if (v !== undefined && v.length < 32) throw new ConfigError(`${name} must be at least 32 characters`);
  return v;
}

const ALGORITHMS: SigningAlg[] = ['ES256', 'EdDSA', 'HS256'];

/**
 * Token signing and PIN hashing keys. Asymmetric (ES256 by default) unless JWT_ALGORITHM=HS256;
 * keys from JWT_KEYS (inline JSON) or JWT_KEYS_FILE, else one generated once and kept in Redis.
 * PINs are hashed with PIN_HASH_KEY, falling back to JWT_SECRET.
 */
function signingConfig(env: Env, production: boolean) {
  const explicitAlg = str(env, 'JWT_ALGORITHM');
  if (explicitAlg !== undefined && !ALGORITHMS.includes(explicitAlg as SigningAlg)) {
    throw new ConfigError(`JWT_ALGORITHM must be one of ${ALGORITHMS.join(', ')}, got "${explicitAlg}"`);
  }
  const givenSecret = secret(env, 'JWT_SECRET');
  const pinHashKey = secret(env, 'PIN_HASH_KEY');
  if (production && explicitAlg === 'HS256' && givenSecret === undefined) {
    throw new ConfigError('JWT_SECRET is required when NODE_ENV=production and JWT_ALGORITHM=HS256');
  }
  if (production && pinHashKey === undefined && givenSecret === undefined) {
    throw new ConfigError('JWT_SECRET is required when NODE_ENV=production unless PIN_HASH_KEY is set (it keys the PIN hashes)');
  }
  const jwtSecret = givenSecret ?? DEV_JWT_SECRET;

  const inline = str(env, 'JWT_KEYS');
  const file = str(env, 'JWT_KEYS_FILE');
  if (inline !== undefined && file !== undefined) throw new ConfigError('set JWT_KEYS or JWT_KEYS_FILE, not both');
  let jwtKeys: KeyMaterial[] = [];
  const source = inline !== undefined ? 'JWT_KEYS' : 'JWT_KEYS_FILE';
  try {
    if (inline !== undefined) jwtKeys = parseKeySet(inline);
    if (file !== undefined) jwtKeys = parseKeySet(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${source}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const jwtActiveKid = str(env, 'JWT_ACTIVE_KID');
  let jwtAlgorithm = (explicitAlg ?? 'ES256') as SigningAlg;
  if (jwtKeys.length > 0) {
    if (explicitAlg === 'HS256') throw new ConfigError(`${source} holds asymmetric keys; JWT_ALGORITHM=HS256 signs with JWT_SECRET`);
    const active = jwtActiveKid === undefined ? jwtKeys.find((k) => k.privateKey) : jwtKeys.find((k) => k.kid === jwtActiveKid);
    if (!active) throw new ConfigError(jwtActiveKid ? `JWT_ACTIVE_KID "${jwtActiveKid}" is not in ${source}` : `${source} has no private key to sign with`);
    if (!active.privateKey) throw new ConfigError(`JWT_ACTIVE_KID "${active.kid}" is a public key: the active key must be private`);
    if (explicitAlg !== undefined && explicitAlg !== active.alg) {
      throw new ConfigError(`JWT_ALGORITHM is ${explicitAlg} but the active key "${active.kid}" is ${active.alg}`);
    }
    jwtAlgorithm = active.alg;
  } else if (jwtActiveKid !== undefined) {
    throw new ConfigError('JWT_ACTIVE_KID is set but JWT_KEYS is not');
  }
  return {
    jwtSecret,
    jwtAlgorithm,
    jwtKeys,
    jwtActiveKid: jwtKeys.length > 0 ? (jwtActiveKid ?? jwtKeys.find((k) => k.privateKey)!.kid) : undefined,
    pinHashKey: pinHashKey ?? jwtSecret,
    pinHashPreviousKey: secret(env, 'PIN_HASH_PREVIOUS_KEY'),
  };
}

/** A comma-separated list, blanks dropped, duplicates kept once. */
function list(env: Env, name: string): string[] {
  return [
    ...new Set(
      (str(env, name) ?? '')
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== ''),
    ),
  ];
}

/**
 * The gateways and their channels. One gateway with one instance or number is configured as it
 * always was (MESSAGING_PROVIDER=evolution + EVOLUTION_INSTANCE); several instances or numbers
 * are lists (EVOLUTION_INSTANCES, WHATSAPP_PHONE_NUMBER_IDS), both gateways
 * `MESSAGING_PROVIDER=evolution,cloud`. The default channel is DEFAULT_CHANNEL, else the first.
 */
function messagingConfig(env: Env): Pick<Config, 'messagingProvider' | 'gateways' | 'channels' | 'defaultChannel' | 'evolution' | 'cloud'> {
  const named = list(env, 'MESSAGING_PROVIDER');
  for (const p of named) {
    if (p !== 'log' && p !== 'evolution' && p !== 'cloud')
      throw new ConfigError(`MESSAGING_PROVIDER must be log, evolution, cloud or evolution,cloud; got "${p}"`);
  }
  if (named.includes('log') && named.length > 1) throw new ConfigError('MESSAGING_PROVIDER=log goes alone: it stands for "no gateway"');
  const gateways = named.filter((p): p is GatewayName => p !== 'log');

  const version = str(env, 'EVOLUTION_API_VERSION') ?? 'v2';
  if (version !== 'v1' && version !== 'v2') throw new ConfigError(`EVOLUTION_API_VERSION must be v1 or v2, got "${version}"`);
  const instances = [...new Set([...list(env, 'EVOLUTION_INSTANCE'), ...list(env, 'EVOLUTION_INSTANCES')])];
  const evolution = {
    url: url(env, 'EVOLUTION_API_URL', ['http:', 'https:']),
    apiKey: str(env, 'EVOLUTION_API_KEY'),
    instance: instances[0],
    instances,
    apiVersion: version as EvolutionApiVersion,
  };
  if (gateways.includes('evolution') && (!evolution.url || !evolution.apiKey || instances.length === 0)) {
    throw new ConfigError('MESSAGING_PROVIDER=evolution needs EVOLUTION_API_URL, EVOLUTION_API_KEY and EVOLUTION_INSTANCE (or EVOLUTION_INSTANCES)');
  }
  const numbers = [...new Set([...list(env, 'WHATSAPP_PHONE_NUMBER_ID'), ...list(env, 'WHATSAPP_PHONE_NUMBER_IDS')])];
  const badNumber = numbers.find((n) => !/^\d{1,32}$/.test(n));
  if (badNumber !== undefined) throw new ConfigError(`WHATSAPP_PHONE_NUMBER_ID(S) must be digits (Meta's phone number id), got "${badNumber}"`);
  const cloud = {
    token: str(env, 'WHATSAPP_TOKEN'),
    phoneNumberId: numbers[0],
    phoneNumberIds: numbers,
    graphApiUrl: url(env, 'GRAPH_API_URL', ['http:', 'https:']) ?? 'https://graph.facebook.com/v21.0',
  };
  if (gateways.includes('cloud') && (!cloud.token || numbers.length === 0)) {
    throw new ConfigError('MESSAGING_PROVIDER=cloud needs WHATSAPP_TOKEN and WHATSAPP_PHONE_NUMBER_ID (or WHATSAPP_PHONE_NUMBER_IDS)');
  }

  const configured = gateways.flatMap((g) => (g === 'evolution' ? instances.map((i) => `evolution:${i}`) : numbers.map((n) => `cloud:${n}`)));
  const all = configured.length === 0 ? ['log'] : configured;
  const defaultChannel = str(env, 'DEFAULT_CHANNEL') ?? all[0]!;
  if (!all.includes(defaultChannel)) throw new ConfigError(`DEFAULT_CHANNEL must be one of ${all.join(', ')}; got "${defaultChannel}"`);
  return {
    messagingProvider: gateways[0] ?? 'log',
    gateways,
    channels: [defaultChannel, ...all.filter((c) => c !== defaultChannel)],
    defaultChannel,
    evolution,
    cloud,
  };
}

/**
 * WHATSAPP_NUMBERS: the number people write to on each channel, `channel=number` pairs
 * (`evolution:main=+15550001111,cloud:1234=+15550002222`); without it WHATSAPP_NUMBER is the
 * default channel's number.
 */
function channelNumbers(env: Env, channels: string[], defaultChannel: string, whatsappNumber: string | undefined): Record<string, string> {
  const pairs = list(env, 'WHATSAPP_NUMBERS');
  if (pairs.length === 0) return whatsappNumber === undefined ? {} : { [defaultChannel]: whatsappNumber };
  const numbers: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.lastIndexOf('=');
    const channel = eq === -1 ? '' : pair.slice(0, eq).trim();
    const number = pair.slice(eq + 1).replace(/[\s()+-]/g, '');
    if (!channels.includes(channel)) throw new ConfigError(`WHATSAPP_NUMBERS: "${pair}" must be channel=number, the channel one of ${channels.join(', ')}`);
    if (!/^[1-9][0-9]{6,14}$/.test(number))
      throw new ConfigError(`WHATSAPP_NUMBERS: "${pair}" needs a phone number in international format, e.g. +15551234567`);
    numbers[channel] = number;
  }
  return numbers;
}

/**
 * OIDC_CLIENTS (JSON array of client metadata) or OIDC_CLIENTS_FILE turn the provider on;
 * OIDC_ISSUER says where it lives (default http://localhost:PORT/oidc outside production).
 */
function oidcConfig(env: Env, production: boolean, port: number, allowedHosts: readonly string[]): OidcConfig | undefined {
  const inline = str(env, 'OIDC_CLIENTS');
  const file = str(env, 'OIDC_CLIENTS_FILE');
  // read whatever is set, so a listing of the variables this module reads finds them
  const rawIssuer = url(env, 'OIDC_ISSUER', ['http:', 'https:']);
  const cookieKeys = str(env, 'OIDC_COOKIE_KEYS')
    ?.split(',')
    .map((k) => k.trim());
  if (inline === undefined && file === undefined) return undefined;
  if (inline !== undefined && file !== undefined) throw new ConfigError('set OIDC_CLIENTS or OIDC_CLIENTS_FILE, not both');
  const source = inline !== undefined ? 'OIDC_CLIENTS' : 'OIDC_CLIENTS_FILE';
  let clients: unknown;
  try {
    clients = JSON.parse(inline ?? readFileSync(file!, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${source}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const valid = (c: unknown): c is OidcClientMetadata =>
    typeof c === 'object' &&
    c !== null &&
    typeof (c as OidcClientMetadata).client_id === 'string' &&
    Array.isArray((c as OidcClientMetadata).redirect_uris) &&
    (c as OidcClientMetadata).redirect_uris.length > 0;
  if (!Array.isArray(clients) || clients.length === 0 || !clients.every(valid)) {
    throw new ConfigError(`${source} must be a JSON array of clients, each with client_id and redirect_uris`);
  }
  const ids = new Set<string>();
  for (const c of clients) {
    if (ids.has(c.client_id)) throw new ConfigError(`${source}: client_id ${c.client_id} appears more than once`);
    ids.add(c.client_id);
    // the token endpoint takes a client's secret with no budget (an app's server makes every
    // exchange and refresh from one address), so in production it is as long as our own secrets
    if (production && typeof c.client_secret === 'string' && Buffer.byteLength(c.client_secret, 'utf8') < MIN_SECRET_BYTES) {
      throw new ConfigError(`${source}: client_secret of client ${c.client_id} must be at least ${MIN_SECRET_BYTES} bytes when NODE_ENV=production`);
    }
    // the login page's colours for this client (src/demo/brand.ts): a wrong one stops the start, not a sign-in
    for (const key of ['brand_color', 'brand_background_color']) {
      if (c[key] !== undefined && (typeof c[key] !== 'string' || !/^#[0-9a-fA-F]{6}$/.test(c[key]))) {
        throw new ConfigError(`${source}: ${key} of client ${c.client_id} must be a colour like #075e54`);
      }
    }
  }
  if (rawIssuer === undefined && production) throw new ConfigError('OIDC_ISSUER is required when OIDC clients are configured in production');
  const issuer = rawIssuer ?? `http://localhost:${port}/oidc`;
  // an issuer identifier has no query or fragment (RFC 8414 §2; the provider refuses one)
  if (/[?#]/.test(issuer)) throw new ConfigError('OIDC_ISSUER must have no query or fragment, e.g. https://auth.example.com/oidc');
  const issuerUrl = new URL(issuer);
  const mountPath = issuerUrl.pathname.replace(/\/+$/, '');
  if (mountPath === '' || mountPath === '/.well-known') throw new ConfigError('OIDC_ISSUER must have a path of its own, e.g. https://auth.example.com/oidc');
  // every URL the provider hands out names the issuer's host (oidc/interaction.ts asIssuersRequest)
  if (!hostAllowed(issuerUrl.host, new Set(allowedHosts))) {
    throw new ConfigError(`OIDC_ISSUER's host ${issuerUrl.hostname} is not in ALLOWED_HOSTS: every OpenID request would be refused`);
  }
  if (cookieKeys?.some((k) => k.length < 32)) throw new ConfigError('OIDC_COOKIE_KEYS must be comma-separated keys of at least 32 characters');
  if (str(env, 'JWT_ALGORITHM') === 'HS256')
    throw new ConfigError('the OpenID provider signs ID tokens with an asymmetric key: JWT_ALGORITHM=HS256 cannot be used with OIDC_CLIENTS');
  return { issuer, mountPath, clients, cookieKeys };
}

/** Variables holding secrets: each must be at least MIN_SECRET_BYTES long in production. */
const SECRET_VARIABLES = [
  'JWT_SECRET',
  'PIN_HASH_KEY',
  'WEBHOOK_SECRET',
  'WEBHOOK_JWT_KEY',
  'WEBHOOK_BEARER_KEY',
  'WEBHOOK_PATH_SECRET',
  'WEBHOOK_VERIFY_TOKEN',
  'ADMIN_PASSWORD',
  'METRICS_TOKEN',
];
const MIN_SECRET_BYTES = 32;

/**
 * Secrets that would let one credential stand for another. WEBHOOK_JWT_KEY equal to JWT_SECRET
 * makes every user's access token (HS256 with the same key) a valid webhook bearer, and the
 * webhook signs in as any phone: refused in every environment. In production a secret shorter
 * than 32 bytes (the HS256 key size) is refused too.
 */
function checkSecrets(env: Env, production: boolean, jwtSecret: string): void {
  const webhookJwtKey = str(env, 'WEBHOOK_JWT_KEY');
  if (webhookJwtKey !== undefined && webhookJwtKey === jwtSecret) {
    throw new ConfigError('WEBHOOK_JWT_KEY must differ from JWT_SECRET (otherwise any access token passes as a webhook token)');
  }
  if (!production) return;
  for (const name of SECRET_VARIABLES) {
    const value = str(env, name);
    if (value !== undefined && Buffer.byteLength(value, 'utf8') < MIN_SECRET_BYTES) {
      throw new ConfigError(`${name} must be at least ${MIN_SECRET_BYTES} bytes when NODE_ENV=production`);
    }
  }
}

/** Parses and validates an environment. Throws a ConfigError naming every problem found. */
export function loadConfig(env: Env = process.env): Config {
  noted = [];
  try {
    const config = readConfig(env);
    if (noted.length > 0) throw new ConfigError(noted);
    return config;
  } finally {
    noted = undefined;
  }
}

function readConfig(env: Env): Config {
  const nodeEnv = str(env, 'NODE_ENV') ?? 'development';
  const production = nodeEnv === 'production';

  const keyPrefix = str(env, 'KEY_PREFIX') ?? 'pinauth';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(keyPrefix)) {
    problem('KEY_PREFIX must be 1 to 64 characters of letters, digits, _ . or -');
  }

  const { jwtSecret, jwtAlgorithm, jwtKeys, jwtActiveKid, pinHashKey, pinHashPreviousKey } = part(
    () => signingConfig(env, production),
    () => signingConfig({}, false),
  );

  const webhookSecret = str(env, 'WEBHOOK_SECRET');
  const webhookJwtKey = str(env, 'WEBHOOK_JWT_KEY');
  const webhookBearerKey = str(env, 'WEBHOOK_BEARER_KEY');
  if (webhookBearerKey !== undefined && webhookBearerKey.length < 16) {
    problem('WEBHOOK_BEARER_KEY must be at least 16 characters');
  }
  const webhookPathSecret = str(env, 'WEBHOOK_PATH_SECRET');
  if (webhookPathSecret !== undefined && !/^[A-Za-z0-9_-]{16,256}$/.test(webhookPathSecret)) {
    // it travels in the URL: only characters that need no escaping, and enough of them to guess none
    problem('WEBHOOK_PATH_SECRET must be 16 to 256 characters of letters, digits, _ or -');
  }
  if (production && webhookIsOpen({ webhookSecret, webhookJwtKey, webhookBearerKey, webhookPathSecret })) {
    problem(
      'One of WEBHOOK_SECRET, WEBHOOK_JWT_KEY, WEBHOOK_BEARER_KEY or WEBHOOK_PATH_SECRET is required when NODE_ENV=production ' +
        '(an open webhook lets anyone sign in as anyone)',
    );
  }
  part(
    () => checkSecrets(env, production, jwtSecret),
    () => undefined,
  );

  const messaging = part(
    () => messagingConfig(env),
    () => messagingConfig({}),
  );
  const adminUser = str(env, 'ADMIN_USER');
  const adminPassword = str(env, 'ADMIN_PASSWORD');
  if (adminPassword !== undefined && adminUser === undefined) {
    problem('ADMIN_PASSWORD is set but ADMIN_USER is not');
  }

  let logLevel = str(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    problem(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
    logLevel = 'info';
  }

  // Heroku Redis may set both; REDIS_TLS_URL is then the encrypted door to the same server.
  const redisUrl = url(env, 'REDIS_TLS_URL', ['redis:', 'rediss:']) ?? url(env, 'REDIS_URL', ['redis:', 'rediss:']) ?? 'redis://127.0.0.1:6379';

  const pinTtlSeconds = int(env, 'PIN_TTL_SECONDS', 180, 1, 86400);
  const port = int(env, 'PORT', 3000, 0, 65535);

  // wa.me wants the number as digits only; people write it with + and spaces
  const whatsappNumber = str(env, 'WHATSAPP_NUMBER')?.replace(/[\s()+-]/g, '');
  if (whatsappNumber !== undefined && !/^[1-9][0-9]{6,14}$/.test(whatsappNumber)) {
    problem('WHATSAPP_NUMBER must be a phone number in international format, e.g. +15551234567');
  }

  const replies = part(
    () => chatConfig(env),
    () => chatConfig({}),
  );
  const loginConfirmation = bool(env, 'LOGIN_CONFIRMATION', false);
  if (loginConfirmation && !replies.enabled) {
    problem('LOGIN_CONFIRMATION=on needs CHAT_REPLIES on: the question is a chat reply');
  }
  if (loginConfirmation && !replies.kinds.has('confirm')) {
    throw new ConfigError('LOGIN_CONFIRMATION=on needs "confirm" in CHAT_REPLY_KINDS: without the question nobody could confirm a sign-in');
  }

  // Production defaults close both oracles (SECURITY.md): the server draws emoji strings, and
  // PINs must be strong enough that guessing one at the rate limits is hopeless.
  const chosen = str(env, 'EMOJI_CHOICE') ?? (production ? 'server' : 'client');
  const emojiChoice = chosen === 'client' || chosen === 'server' ? chosen : 'server';
  if (emojiChoice !== chosen) problem(`EMOJI_CHOICE must be client or server, got "${chosen}"`);

  const redis = part(
    () => redisTopology(env, redisUrl),
    () => redisTopology({}, redisUrl),
  );
  const collectRetrySeconds = int(env, 'COLLECT_RETRY_SECONDS', 20, 0, 300);
  const refreshReuseSeconds = int(env, 'REFRESH_REUSE_SECONDS', 10, 0, 300);
  const inboundPartitions = int(env, 'INBOUND_PARTITIONS', 1, 1, 64);
  const listen = listenSettings(env, production);

  return {
    nodeEnv,
    production,
    port,
    ...listen,
    redisUrl,
    redis,
    redisWait: {
      replicas: int(env, 'REDIS_WAIT_REPLICAS', 0, 0, 16),
      timeoutMs: int(env, 'REDIS_WAIT_TIMEOUT_MS', 1000, 10, 60000),
    },
    keyPrefix,
    jwtSecret,
    jwtAlgorithm,
    jwtKeys,
    jwtActiveKid,
    pinHashKey,
    pinHashPreviousKey,
    jwtIssuer: str(env, 'JWT_ISSUER') ?? 'pin-auth',
    accessTokenTtl: int(env, 'ACCESS_TOKEN_TTL', 900, 1, 86400 * 7),
    refreshTokenTtl: int(env, 'REFRESH_TOKEN_TTL', 2592000, 1, 86400 * 365),
    verifiedTokenCache: int(env, 'VERIFIED_TOKEN_CACHE', VERIFIED_ACCESS_TOKENS, 0, 1_000_000),
    pinTtlSeconds,
    activePinsRefreshSeconds: int(env, 'ACTIVE_PINS_REFRESH_SECONDS', 10, 0, 3600),
    registration: {
      emojiChoice,
      emojiLength: int(env, 'EMOJI_LENGTH', 8, 4, 16),
      pinMinBits: int(env, 'PIN_MIN_BITS', production ? 64 : 0, 0, 512),
    },
    verifiedGraceSeconds: int(env, 'VERIFIED_GRACE_SECONDS', 60, 1, 3600),
    expiredMemorySeconds: int(env, 'EXPIRED_MEMORY_SECONDS', 3600, 1, 86400 * 7),
    audit: {
      days: int(env, 'AUDIT_RETENTION_DAYS', 90, 1, 3650),
      maxEvents: int(env, 'AUDIT_MAX_EVENTS', 1_000_000, 1000, 100_000_000),
      streamsPerNode: int(env, 'AUDIT_STREAMS_PER_NODE', 8, 1, 1000),
      heartbeatSeconds: int(env, 'AUDIT_STREAM_HEARTBEAT_SECONDS', 15, 1, 300),
    },
    erasureReceiptDays: int(env, 'ERASURE_RECEIPT_DAYS', 365, 1, 3650),
    collectRetrySeconds,
    refreshReuseSeconds,
    idempotencyKeySeconds: int(env, 'IDEMPOTENCY_KEY_SECONDS', 86400, 60, 86400 * 7),
    messageIdSeconds: int(env, 'MESSAGE_ID_SECONDS', 86400, 600, 86400 * 30),
    deliveryRecordSeconds: int(env, 'DELIVERY_RECORD_SECONDS', 7 * 86400, 600, 86400 * 90),
    instanceName: str(env, 'INSTANCE_NAME') ?? str(env, 'DYNO') ?? os.hostname(),
    webhookSecret,
    webhookJwtKey,
    webhookBearerKey,
    webhookPathSecret,
    webhookVerifyToken: str(env, 'WEBHOOK_VERIFY_TOKEN'),
    webhookLimits: {
      inFlightPerIp: int(env, 'WEBHOOK_IN_FLIGHT_PER_IP', 128, 1, 1e6),
      unverifiedBytes: int(env, 'WEBHOOK_UNVERIFIED_BYTES', 32 * 1024 * 1024, 1024 * 1024, 2 ** 40),
    },
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 10_000, 1000, 300_000),
    ...messaging,
    outboundTimeoutMs: int(env, 'OUTBOUND_TIMEOUT_MS', 10000, 100, 120000),
    outboundPerSecond: int(env, 'OUTBOUND_PER_SECOND', 20, 1, 10000),
    outboundAttempts: int(env, 'OUTBOUND_ATTEMPTS', 8, 1, 50),
    replies,
    loginConfirmation,
    adminUser,
    adminPassword,
    metricsToken: str(env, 'METRICS_TOKEN'),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    corsOrigins: (str(env, 'CORS_ORIGINS') ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter((o) => o !== ''),
    // a NATed office or campus shows one address for hundreds of people
    socketsPerIp: int(env, 'SOCKETS_PER_IP', 300, 1, 1e6),
    logLevel,
    rateLimits: {
      registerPerMinute: int(env, 'RATE_REGISTER_PER_MINUTE', 30, 1, 1e6),
      checkPerMinute: int(env, 'RATE_CHECK_PER_MINUTE', 120, 1, 1e6),
      checkPinPerSecond: int(env, 'RATE_CHECK_PIN_PER_SECOND', 1, 1, 1e6),
      checkPinBurst: int(env, 'RATE_CHECK_PIN_BURST', 2, 1, 1e6),
      unknownPinPer10Minutes: int(env, 'RATE_UNKNOWN_PIN_PER_10_MINUTES', 30, 1, 1e6),
      sendPerMinute: int(env, 'RATE_SEND_PER_MINUTE', 30, 1, 1e6),
      replyPerMinute: int(env, 'RATE_REPLY_PER_MINUTE', 5, 1, 1e6),
      senderMessagesPerMinute: int(env, 'SENDER_MESSAGES_PER_MINUTE', 20, 0, 1e6),
      socketEventsPerSecond: int(env, 'RATE_SOCKET_EVENTS_PER_SECOND', 20, 1, 1e6),
      adminFailuresPer15Minutes: int(env, 'RATE_ADMIN_FAILURES_PER_15_MINUTES', 10, 1, 1e6),
      adminActionsPerMinute: int(env, 'RATE_ADMIN_ACTIONS_PER_MINUTE', 300, 1, 1e6),
      oidcAuthorizePerMinute: int(env, 'RATE_OIDC_AUTHORIZE_PER_MINUTE', 30, 1, 1e6),
      oidcInteractionPerMinute: int(env, 'RATE_OIDC_INTERACTION_PER_MINUTE', 600, 1, 1e6),
      ipv6PrefixLength: int(env, 'RATE_IPV6_PREFIX', 64, 1, 128),
    },
    inboundConcurrency: int(env, 'INBOUND_CONCURRENCY', 256, 1, 1000),
    inboundPartitions,
    outboundPartitions: int(env, 'OUTBOUND_PARTITIONS', inboundPartitions, 1, 64),
    inboundRetryMaxMs: int(env, 'INBOUND_RETRY_MAX_MS', 30000, 100, 600000),
    stalledIntervalMs: int(env, 'STALLED_INTERVAL_MS', 30000, 500, 600000),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 25000, 100, 600000),
    metricsIntervalMs: int(env, 'METRICS_INTERVAL_MS', 5000, 100, 600000),
    demo: {
      enabled: bool(env, 'DEMO_PAGE', true),
      whatsappNumber,
      numbers: part(
        () => channelNumbers(env, messaging.channels, messaging.defaultChannel, whatsappNumber),
        () => ({}),
      ),
    },
    oidc: part(
      () => oidcConfig(env, production, port, listen.allowedHosts),
      () => oidcConfig({}, false, port, []),
    ),
    senderCountries: senderCountries(env),
  };
}

/** SENDER_COUNTRIES_ALLOW or SENDER_COUNTRIES_DENY (not both): country codes that have phone numbers (GB, not UK). */
function senderCountries(env: Env): SenderCountries | undefined {
  const allow = list(env, 'SENDER_COUNTRIES_ALLOW');
  const deny = list(env, 'SENDER_COUNTRIES_DENY');
  if (allow.length > 0 && deny.length > 0) {
    problem('SENDER_COUNTRIES_ALLOW and SENDER_COUNTRIES_DENY are both set: set one of them');
    return undefined;
  }
  const [mode, name, codes] = allow.length > 0 ? (['allow', 'SENDER_COUNTRIES_ALLOW', allow] as const) : (['deny', 'SENDER_COUNTRIES_DENY', deny] as const);
  if (codes.length === 0) return undefined;
  const countries = codes.map((c) => c.toUpperCase());
  const wrong = countries.filter((c) => !isSupportedCountry(c));
  if (wrong.length > 0) {
    problem(`${name}: not ISO 3166 alpha-2 country codes with phone numbers: ${wrong.join(', ')} (e.g. GB, BR, US)`);
    return undefined;
  }
  return { mode, countries: new Set(countries) };
}

/** The fixed development secret signs tokens (HS256) or keys PIN hashes. */
/** No webhook method is configured: anyone who can reach the webhook can sign in as anyone. */
export const webhookIsOpen = (c: Pick<Config, 'webhookSecret' | 'webhookJwtKey' | 'webhookBearerKey' | 'webhookPathSecret'>): boolean =>
  [c.webhookSecret, c.webhookJwtKey, c.webhookBearerKey, c.webhookPathSecret].every((v) => v === undefined);

export const DEV_SECRET_IN_USE = (c: Config): boolean => c.pinHashKey === DEV_JWT_SECRET || (c.jwtAlgorithm === 'HS256' && c.jwtSecret === DEV_JWT_SECRET);
