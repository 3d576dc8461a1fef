import http from 'node:http';
import { createApp } from '../http/app.js';
import { startWorkers, type WorkerHost } from '../queues/worker-host.js';
import { attachRealtime, type Realtime } from '../realtime/server.js';
import { answerClientErrors } from '../security/client-errors.js';
import type { Bootstrapped } from './bootstrap.js';

export interface WebRole {
  server: http.Server;
  realtime: Realtime;
  stop(): Promise<void>;
}

/** The web role: Koa API and Socket.IO on one port. */
export async function startWeb(b: Bootstrapped): Promise<WebRole> {
  const { config, log, services } = b;
  const app = createApp(services);
  const server = http.createServer(app.callback());
  // Longer than any load balancer's idle timeout (Heroku's router: 55 s), so it closes first.
  server.keepAliveTimeout = 61_000;
  server.headersTimeout = 65_000;
  answerClientErrors(server);
  const realtime = attachRealtime(server, services);
  await new Promise<void>((resolve) => server.listen(config.port, resolve));
  const address = server.address();
  log.info('web listening', { port: typeof address === 'object' && address ? address.port : config.port });

  return {
    server,
    realtime,
    async stop() {
      // No new connections; in-flight requests finish; sockets are told to go elsewhere.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await realtime.close();
      const timer = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownTimeoutMs).unref());
      await Promise.race([closed, timer]);
      server.closeAllConnections();
    },
  };
}

export interface WorkerRole {
  host: WorkerHost;
  stop(): Promise<void>;
}

/** The worker role: BullMQ workers of every queue. */
export function startWorker(b: Bootstrapped): WorkerRole {
  const host = startWorkers(b.services);
  b.log.info('workers started', { queues: host.workers.map((w) => w.name) });
  return { host, stop: () => host.close(b.config.shutdownTimeoutMs) };
}
