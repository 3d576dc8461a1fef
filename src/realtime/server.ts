import type { Server as HttpServer } from 'node:http';
import { Server } from 'socket.io';
import type { Config } from '../config.js';
import { connect } from '../redis/connection.js';
import { socketAdapter } from './adapter.js';
import type { Keys } from '../redis/keys.js';
import { originOf } from '../registrations/origin.js';
import { deliverAwaiting, deliverEnded, deliverExpiry, deliverLogin, isLoginResult } from './delivery.js';
import { INTERNAL_EVENTS } from './events.js';
import { createHandlers, type HandlerServices } from './handlers.js';
import { connectionData, initConnectionData, startSocket, type Connection } from './socket-state.js';
import { EventThrottle } from './throttle.js';
import type { Limits } from '../security/limits.js';
import type { Probes } from '../security/probes.js';
import { handshakeIp, socketAdmission } from './admission.js';

/** What the sockets use of the process's services (services.ts's bag has it). */
export interface RealtimeServices extends HandlerServices {
  config: Config;
  keys: Keys;
  limits: Limits;
  probes: Probes;
}

export interface Realtime {
  io: Server;
  connections(): number;
  /** Closes every connection so its client reconnects (to another node); bounded, never waits on Redis. */
  close(): Promise<void>;
}

/**
 * Socket.IO on the web node's HTTP server (same port, default path), rooms shared across nodes
 * through the Redis adapter on `<KEY_PREFIX>:socket.io`, the channel workers publish on.
 * Connections need no authentication: a client registers before it has tokens.
 */
export function attachRealtime(httpServer: HttpServer, services: RealtimeServices): Realtime {
  const { config, keys, log } = services;
  // Two connections of their own: a subscribed connection can't run commands. They wait and
  // reconnect for ever (ioredis re-subscribes); RESP3 pub/sub arrives as push frames, which
  // ioredis 6 turns into the same `messageBuffer`/`pmessageBuffer` events the adapter listens to.
  const pub = connect(config.redis, 'subscriber', `pinauth:io-pub:${config.instanceName}`);
  const sub = connect(config.redis, 'subscriber', `pinauth:io-sub:${config.instanceName}`);
  const admission = socketAdmission(config, services.limits.group, services.probes);
  const io = new Server(httpServer, {
    serveClient: false,
    allowRequest: admission.allowRequest,
    maxHttpBufferSize: 16 * 1024,
    cors: config.corsOrigins.length > 0 ? { origin: config.corsOrigins } : undefined,
    adapter: socketAdapter(config.redis.kind === 'cluster', pub, sub, keys.socketChannel()),
  });

  // From workers (see notifier.ts): hand the event to this node's sockets of that registration.
  io.on(INTERNAL_EVENTS.authSuccess, (pinHash: unknown, result: unknown) => {
    if (typeof pinHash === 'string' && isLoginResult(result)) deliverLogin(io, pinHash, result);
  });
  io.on(INTERNAL_EVENTS.pinExpired, (pinHash: unknown, pinId: unknown) => {
    if (typeof pinHash === 'string' && typeof pinId === 'string') deliverExpiry(io, pinHash, pinId);
  });
  io.on(INTERNAL_EVENTS.awaitingConfirmation, (pinHash: unknown, pinId: unknown) => {
    if (typeof pinHash === 'string' && typeof pinId === 'string') deliverAwaiting(io, pinHash, pinId);
  });
  io.on(INTERNAL_EVENTS.loginDenied, (pinHash: unknown, pinId: unknown) => {
    if (typeof pinHash === 'string' && typeof pinId === 'string') deliverEnded(io, pinHash, pinId, 'LOGIN_DENIED');
  });
  io.on(INTERNAL_EVENTS.loginFailed, (pinHash: unknown, pinId: unknown) => {
    if (typeof pinHash === 'string' && typeof pinId === 'string') deliverEnded(io, pinHash, pinId, 'LOGIN_FAILED');
  });

  // Each connection, from its handshake: one record (socket-state.ts) with the client IP and the
  // device (from the User-Agent, for the chat confirmation), and its place in the per-network
  // count. One listener function shared by every connection (EventEmitter calls it with the
  // connection as `this`) takes the place back. A closure with its `once` wrapper per connection
  // and two more WeakMaps cost ≈ 0.36 KB on each idle socket (heap snapshots, docs/benchmark.md).
  function connectionClosed(this: Connection): void {
    this.off('close', connectionClosed);
    const data = connectionData(this);
    if (data) admission.closed(data.ip);
  }
  // a handshake let through that made no connection gives back the place allowRequest took for it
  io.engine.on('connection_error', (err: { req: Connection['request'] }) => admission.failed(err.req));
  io.engine.on('connection', (conn: Connection) => {
    const request = conn.request as Connection['request'] | null;
    const ip = request ? handshakeIp(request, config.trustProxy) : conn.remoteAddress;
    initConnectionData(conn, ip, originOf(request?.headers['user-agent'], ip));
    admission.opened(request, ip);
    conn.on('close', connectionClosed);
    // Socket.IO's memory guide (socket.io/docs/v4/memory-usage): the handshake request is let go
    // once read; `socket.handshake.headers` is empty as a result. engine.io 6.6.12+ still holds a
    // websocket's upgrade request for the connection's life (docs/upstream.md).
    (conn as { request: Connection['request'] | null }).request = null;
  });

  const bindHandlers = createHandlers(services, new EventThrottle(services.limits.socketBudget()));
  io.on('connection', (socket) => {
    startSocket(socket);
    bindHandlers(socket);
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
