import type { IncomingMessage, Server as HttpServer } from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import { Server } from 'socket.io';
import { createRedis } from '../redis/connection.js';
import type { Services } from '../services.js';
import { deliverExpiry, deliverLogin, isLoginResult } from './delivery.js';
import { INTERNAL_EVENTS } from './events.js';
import { bindHandlers } from './handlers.js';
import { initSocketData } from './socket-state.js';
import { EventThrottle } from './throttle.js';

export interface Realtime {
  io: Server;
  connections(): number;
  /** Closes every connection so its client reconnects (to another node); bounded, never waits on Redis. */
  close(): Promise<void>;
}

/** Client IP of a socket: the last X-Forwarded-For hop when behind a trusted proxy (as Koa's ctx.ip). */
function socketIp(headers: Record<string, string | string[] | undefined>, address: string, trustProxy: boolean): string {
  const xff = headers['x-forwarded-for'];
  if (trustProxy && typeof xff === 'string' && xff.trim() !== '') return xff.split(',').pop()!.trim();
  return address;
}

/**
 * Socket.IO on the web node's HTTP server (same port, default path), rooms shared across nodes
 * through the Redis adapter on `<KEY_PREFIX>:socket.io`, the channel workers publish on.
 * Connections need no authentication: a client registers before it has tokens.
 */
export function attachRealtime(httpServer: HttpServer, services: Services): Realtime {
  const { config, keys, log } = services;
  // Two connections of their own: a subscribed connection can't run commands. They wait and
  // reconnect for ever (ioredis re-subscribes); RESP3 pub/sub arrives as push frames, which
  // ioredis 6 turns into the same `messageBuffer`/`pmessageBuffer` events the adapter listens to.
  const pub = createRedis(config.redisUrl, 'subscriber', `pinauth:io-pub:${config.instanceName}`);
  const sub = createRedis(config.redisUrl, 'subscriber', `pinauth:io-sub:${config.instanceName}`);
  const io = new Server(httpServer, {
    serveClient: false,
    maxHttpBufferSize: 16 * 1024,
    cors: config.corsOrigins.length > 0 ? { origin: config.corsOrigins } : undefined,
    adapter: createAdapter(pub, sub, { key: keys.socketChannel() }),
  });

  // From workers (see notifier.ts): hand the event to this node's sockets of that registration.
  io.on(INTERNAL_EVENTS.authSuccess, (pinHash: unknown, result: unknown) => {
    if (typeof pinHash === 'string' && isLoginResult(result)) deliverLogin(io, pinHash, result);
  });
  io.on(INTERNAL_EVENTS.pinExpired, (pinHash: unknown, pinId: unknown) => {
    if (typeof pinHash === 'string' && typeof pinId === 'string') deliverExpiry(io, pinHash, pinId);
  });

  // Each connection keeps its first HTTP request alive by default (~4 KB of heap apiece); only
  // the client IP is needed from it, so take that and let the request go (Socket.IO's memory
  // guide). socket.handshake.headers is empty as a result.
  const clientIps = new WeakMap<object, string>();
  io.engine.on('connection', (raw: { request: IncomingMessage | null; remoteAddress: string }) => {
    if (raw.request) clientIps.set(raw, socketIp(raw.request.headers, raw.remoteAddress, config.trustProxy));
    raw.request = null;
  });

  const throttle = new EventThrottle(services.limits.socketBudget());
  io.on('connection', (socket) => {
    initSocketData(socket, clientIps.get(socket.conn) ?? socket.handshake.address);
    bindHandlers(socket, services, throttle);
  });

  return {
    io,
    connections: () => io.of('/').sockets.size,
    async close() {
      const count = io.of('/').sockets.size;
      // Closing the transports (not a Socket.IO disconnect packet, after which a client would
      // stay away) makes clients see "transport close" and reconnect, to another node once this
      // one stopped listening. io.close() is not used: it also waits on the HTTP server.
      io.engine.close();
      pub.disconnect();
      sub.disconnect();
      log.info('sockets closed', { connections: count });
    },
  };
}
