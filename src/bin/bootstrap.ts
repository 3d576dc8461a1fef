import { ConfigError, DEV_SECRET_IN_USE, loadConfig, shortRetryWindows, webhookIsOpen, type Config } from '../config.js';
import { redisFault } from '../errors.js';
import { createLogger, routeConsoleTo, type Logger } from '../observability/logger.js';
import { createProcessMetrics, type ProcessMetrics } from '../observability/metrics.js';
import { startSnapshotPublisher, type SnapshotPublisher } from '../observability/snapshots.js';
import { waitReady } from '../redis/connection.js';
import { createServices, type Services } from '../services.js';
import { bannerFacts, bannerText, type Role } from './banner.js';
import { configWarnings, redisWarnings } from './setup-checks.js';

/**
 * What every entry point does first: read the config (one line and exit 1 when it is wrong),
 * make the logger and services, warn about unsafe development settings, and install the
 * signal handlers that run the role's graceful shutdown once.
 */
export interface Bootstrapped {
  config: Config;
  log: Logger;
  services: Services;
  metrics: ProcessMetrics;
  /** writes this process's metrics into Redis for the web's /metrics */
  snapshots: SnapshotPublisher;
  role: Role;
}

export function bootstrap(role: Role): Bootstrapped {
  let config: Config;
  try {
    config = loadConfig();
    // WAIT counts the replicas of one primary; a cluster's writes of one request span several
    if (config.redis.kind === 'cluster' && config.redisWait.replicas > 0)
      throw new ConfigError('REDIS_WAIT_REPLICAS is not available with REDIS_CLUSTER_NODES yet (see docs/scaling.md)');
  } catch (err) {
    if (err instanceof ConfigError) {
      // before the logger exists; in production still one JSON object a line, as every other line
      const line =
        process.env.NODE_ENV === 'production'
          ? JSON.stringify({ level: 'error', message: 'configuration error', problems: err.problems, role, timestamp: new Date().toISOString() })
          : `pin-auth: configuration error: ${err.message}`;
      process.stderr.write(`${line}\n`);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger({ level: config.logLevel, production: config.production, role, instance: config.instanceName });
  routeConsoleTo(log);
  const b = compose(role, config, log);
  // A Redis fault here is a command a library sent without awaiting it: a warning with its kind.
  // Anything else was never expected: the stack says where.
  process.on('unhandledRejection', (reason) => {
    const fault = redisFault(reason);
    if (fault !== null) log.warn('background Redis command failed', { fault, error: String(reason) });
    else log.error('unhandled rejection', { error: String(reason), stack: reason instanceof Error ? reason.stack : undefined });
  });
  return b;
}

/**
 * The composition of a role, without touching the process (no console routing, no process
 * handlers, no exit): the start-up warnings, the services, the metrics and their snapshots.
 * bootstrap() calls it; tests call it to run several nodes in one process.
 */
export function compose(role: Role, config: Config, log: Logger): Bootstrapped {
  if (DEV_SECRET_IN_USE(config)) log.warn('JWT_SECRET (or PIN_HASH_KEY) is not set: using a fixed development secret. Never do this in production.');
  if (config.jwtAlgorithm !== 'HS256' && config.jwtKeys.length === 0) {
    log.warn(`JWT_KEYS is not set: tokens are signed with a ${config.jwtAlgorithm} key generated at first start and kept in Redis (docs/tokens.md)`);
  }
  if (webhookIsOpen(config)) {
    log.warn(
      'Webhook authentication is not set (none of WEBHOOK_SECRET, WEBHOOK_JWT_KEY, WEBHOOK_BEARER_KEY, WEBHOOK_PATH_SECRET): ' +
        'anyone who can reach the webhook can sign in as anyone.',
    );
  }
  for (const warning of [...shortRetryWindows(config), ...configWarnings(config)]) log.warn(warning);
  const services = createServices(config, log, role);
  // read before this process's first metrics snapshot (one interval from now), so it is not taken for another's
  void redisWarnings(services.redis, config, Date.now() + config.metricsIntervalMs - 300).then((warnings) => {
    for (const w of warnings) log.warn(w);
  });
  const metrics = createProcessMetrics({ web: role !== 'worker', worker: role !== 'web' });
  metrics.setReplicaDegradedSource(() => services.replicas.degraded());
  services.audit.attach(metrics.audit);
  const snapshots = startSnapshotPublisher({
    redis: services.redis,
    key: services.keys.metricsNodes(),
    node: config.instanceName,
    registry: metrics.registry,
    intervalMs: config.metricsIntervalMs,
    log,
  });
  return { config, log, services, metrics, snapshots, role };
}

/**
 * Logs the start-up banner once the roles run: readable lines in development, one JSON entry
 * with the same facts in production (log collectors parse fields, not ASCII art).
 */
export function announce(b: Bootstrapped, port?: number): void {
  const facts = bannerFacts(b.config, b.role, port);
  if (b.config.production) b.log.info('pin-auth started', { ...facts });
  else b.log.info(bannerText(facts));
}

/**
 * Waits (bounded) for Redis so the first requests don't fail needlessly; starts anyway after.
 * The signing keys are loaded meanwhile; a generated key needs Redis, so while it is missing
 * the load is retried every second in the background (tokens answer 503 until then).
 */
export async function awaitRedis(b: Bootstrapped, timeoutMs = 10000): Promise<void> {
  try {
    await waitReady(b.services.redis, timeoutMs);
  } catch {
    b.log.warn('Redis is not reachable yet; starting anyway (requests answer 503 until it is)');
  }
  const load = (): Promise<void> =>
    b.services.ready().catch((err: unknown) => {
      b.log.warn('signing keys not loaded yet; retrying', { error: String(err) });
      setTimeout(() => void load(), 1000).unref();
    });
  await load();
}

/**
 * Runs `stop` once on SIGTERM or SIGINT, writes the last metrics snapshot, closes Redis and
 * exits 0 (1 if stopping failed or overran). The hard limit stays inside Heroku's 30 seconds
 * between SIGTERM and SIGKILL with the default SHUTDOWN_TIMEOUT_MS (25 s).
 */
export function onShutdown(b: Bootstrapped, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    b.log.info('shutting down', { signal });
    const hardLimit = setTimeout(() => {
      b.log.error('shutdown overran its limit; exiting');
      process.exit(1);
    }, b.config.shutdownTimeoutMs + 3000);
    hardLimit.unref();
    stop()
      .then(() => b.snapshots.stop())
      .then(() => b.services.close())
      .then(() => {
        b.log.info('stopped');
        process.exit(0);
      })
      .catch((err: unknown) => {
        b.log.error('shutdown failed', { error: String(err) });
        process.exit(1);
      });
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
