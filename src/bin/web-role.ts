import http from 'node:http';
import type Provider from 'oidc-provider';
import { adminMiddleware } from '../http/admin/index.js';
import { AdminLoginThrottle } from '../http/admin/login-throttle.js';
import { metricsHooks } from '../http/admin/request-metrics.js';
import { createApp } from '../http/app.js';
import { loginPageRoutes } from '../demo/routes.js';
import { createClusterGauges } from '../observability/cluster-gauges.js';
import { renderClusterMetrics } from '../observability/snapshots.js';
import { oidcMiddleware } from '../oidc/interaction.js';
import { checkClients, lazyProvider } from '../oidc/provider.js';
import { ConfigError, type OidcConfig } from '../config.js';
import { AppError } from '../errors.js';
import { attachRealtime, type Realtime } from '../realtime/server.js';
import type { Bootstrapped } from './bootstrap.js';
import { answerClientErrors } from '../security/client-errors.js';
import { InFlightResponses } from '../http/in-flight.js';

export interface WebRole {
  server: http.Server;
  realtime: Realtime;
  /** the port it listens on (PORT, or the one the system picked for PORT=0) */
  port: number;
  stop(): Promise<void>;
}

/** Why the server can't listen, for the errors that are the set-up's, not a fault of ours. */
const LISTEN_FAULTS: Record<string, string> = {
  EADDRINUSE: 'the port is in use by another process',
  EACCES: 'no permission to listen on this port',
  EADDRNOTAVAIL: 'HOST is not an address of this machine',
};

/**
 * Listens on PORT at HOST (every interface when undefined). A port in use (or one not ours to
 * take, or a HOST not of this machine) is one error line that names it, then exit 1: no stack
 * trace, nothing started half-way.
 */
async function listen(server: http.Server, port: number, host: string | undefined, log: Bootstrapped['log']): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    const reason = LISTEN_FAULTS[code];
    if (reason === undefined) throw err;
    log.error(`cannot listen on port ${port}: ${reason}`, { port, host: host ?? 'every interface', code });
    process.exit(1);
  }
}

/**
 * A configured OpenID client the provider would refuse is a configuration error: one line that
 * names it, then exit 1, as for any other. Without the signing keys yet (Redis down at start)
 * the provider is built, and its clients read, at its first request; OpenID requests answer 503
 * until then. A provider that cannot be built for any other reason stops the start too.
 */
async function refuseBadClients(provider: () => Promise<Provider>, oidc: OidcConfig, log: Bootstrapped['log']): Promise<void> {
  try {
    await checkClients(await provider(), oidc);
  } catch (err) {
    if (err instanceof AppError && err.code === 'NETWORK_ERROR') {
      log.warn('OpenID clients not read at start; the provider reads them at its first request', { error: err.message });
      return;
    }
    if (err instanceof ConfigError) log.error('configuration error', { problems: err.problems });
    else log.error('the OpenID provider cannot start', { error: String(err) });
    process.exit(1);
  }
}

/** A node that stopped writing snapshots for this long is dropped from /metrics. */
const staleAfter = (intervalMs: number): number => Math.max(3 * intervalMs, 15_000);

/** The web role: the Koa app (API, webhook, pages, operator pages) and Socket.IO on one port. */
export async function startWeb(b: Bootstrapped): Promise<WebRole> {
  const { config, log, services, metrics } = b;
  const live = createClusterGauges(
    services.queues.all(),
    () => services.registrations.activeCount(),
    () => services.health.states(true),
  );
  const render = () =>
    renderClusterMetrics({
      redis: services.redis,
      key: services.keys.metricsNodes(),
      node: config.instanceName,
      registry: metrics.registry,
      live,
      staleAfterMs: staleAfter(config.metricsIntervalMs),
    });
  const hooks = metricsHooks(metrics.web);
  services.probes.attach(metrics.web);
  let oidc: ReturnType<typeof oidcMiddleware> | undefined;
  if (config.oidc) {
    const provider = lazyProvider(services, config.oidc);
    await refuseBadClients(provider, config.oidc, log);
    oidc = oidcMiddleware(services, config.oidc, provider);
  }
  const throttle = new AdminLoginThrottle(services.redis, services.keys, config.rateLimits.adminFailuresPer15Minutes, config.rateLimits.ipv6PrefixLength, log);
  const app = createApp(services, {
    ...hooks,
    oidc,
    before: adminMiddleware(config, services.queues.all(), render, throttle),
    pages: loginPageRoutes(config, services.health),
  });
  if (config.oidc) log.info('OpenID provider enabled', { issuer: config.oidc.issuer, clients: config.oidc.clients.length });
  // A request's head and body must arrive within REQUEST_TIMEOUT_MS of its first byte, or Node
  // closes the connection (a stalled body holds nothing for long: SECURITY.md); checked every
  // second rather than Node's 30 s. The time a keep-alive connection idles between requests
  // does not count (Node measures from the request's first byte).
  const server = http.createServer(
    { requestTimeout: config.requestTimeoutMs, headersTimeout: config.requestTimeoutMs, connectionsCheckingInterval: 1000 },
    app.callback(),
  );
  // Longer than any load balancer's idle timeout (Heroku's router: 55 s), so it closes first.
  server.keepAliveTimeout = 61_000;
  // Requests Node's parser refuses still get the documented error body.
  answerClientErrors(server);
  let stopping = false;
  // While draining, every response closes its connection (keep-alive clients move on, and
  // server.close() is not left waiting for connections that would otherwise idle on).
  const inFlight = new InFlightResponses();
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (stopping) return res.setHeader('Connection', 'close');
    inFlight.track(res);
  });
  const realtime = attachRealtime(server, services);
  metrics.web.setSocketSource(() => realtime.connections());
  await listen(server, config.port, config.host, log);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info('web listening', { port, host: config.host ?? 'every interface' });

  return {
    server,
    realtime,
    port,
    async stop() {
      // No new connections; requests in flight finish. Socket.IO clients lose their transport
      // at once (not a server "disconnect", which would stop them reconnecting) and reconnect
      // to another node; io.close() then waits for the HTTP server, so both share one limit.
      stopping = true;
      // live audit event streams end now (their clients resume elsewhere with Last-Event-ID)
      services.audit.stopFollowing();
      inFlight.forEach((res) => {
        if (!res.headersSent) res.setHeader('Connection', 'close');
      });
      const httpClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const socketsClosed = realtime.close();
      const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), config.shutdownTimeoutMs).unref());
      if ((await Promise.race([Promise.all([httpClosed, socketsClosed]), timer])) === 'timeout') {
        log.warn('requests still open at the shutdown limit; closing them');
      }
      server.closeAllConnections();
      await socketsClosed;
      log.info('web stopped');
    },
  };
}
