import type { Server as HttpServer } from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import { Server } from 'socket.io';
import { createRedis } from '../redis/connection.js';
import type { Services } from '../services.js';
import { bindHandlers, type SocketData } from './handlers.js';
import { INTERNAL_PIN_EXPIRED, registrationRoom, SERVER_EVENTS } from './events.js';

export interface Realtime {
  io: Server;
  connections(): number;
  close(): Promise<void>;
}

/** Client IP of a socket: the last X-Forwarded-For hop when behind a trusted proxy. */
function socketIp(headers: Record<string, string | string[] | undefined>, address: string, trustProxy: boolean): string {
  const xff = headers['x-forwarded-for'];
  if (trustProxy && typeof xff === 'string' && xff.trim() !== '') return xff.split(',').pop()!.trim();
  return address;
}

/**
 * Socket.IO on the web node's HTTP server, rooms shared across nodes through the Redis adapter.
 * Connections need no authentication: a client registers before it has tokens.
 */
export function attachRealtime(httpServer: HttpServer, services: Services): Realtime {
  const { config, keys, log } = services;
  const pub = createRedis(config.redisUrl, 'subscriber', `pinauth:io-pub:${config.instanceName}`);
  const sub = createRedis(config.redisUrl, 'subscriber', `pinauth:io-sub:${config.instanceName}`);
  const io = new Server(httpServer, {
    serveClient: false,
    maxHttpBufferSize: 16 * 1024,
    cors: config.corsOrigins.length > 0 ? { origin: config.corsOrigins } : undefined,
    adapter: createAdapter(pub, sub, { key: keys.socketChannel() }),
  });

  // A registration expired: send its PIN to the sockets of this node that registered it.
  io.on(INTERNAL_PIN_EXPIRED, (pinHash: unknown, pinId: unknown) => {
    if (typeof pinHash !== 'string' || typeof pinId !== 'string') return;
    const room = registrationRoom(pinHash);
    for (const socketId of io.sockets.adapter.rooms.get(room) ?? []) {
      const socket = io.sockets.sockets.get(socketId);
      const held = (socket?.data as SocketData | undefined)?.pins.get(pinHash);
      if (!socket || !held || held.pinId !== pinId) continue;
      socket.emit(SERVER_EVENTS.pinExpired, { pin: held.pin });
      (socket.data as SocketData).pins.delete(pinHash);
      void socket.leave(room);
    }
  });

  const budget = services.limits.socketBudget();
  io.on('connection', (socket) => {
    socket.data = {
      pins: new Map(),
      ip: socketIp(socket.handshake.headers, socket.handshake.address, config.trustProxy),
    } satisfies SocketData;
    bindHandlers(socket, services, budget);
  });

  return {
    io,
    connections: () => io.of('/').sockets.size,
    async close() {
      // Disconnects every client (they reconnect to another node) and stops the adapter.
      await new Promise<void>((resolve) => io.close(() => resolve()));
      pub.disconnect();
      sub.disconnect();
      log.info('sockets closed');
    },
  };
}
