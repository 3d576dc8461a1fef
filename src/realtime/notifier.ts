import { Emitter } from '@socket.io/redis-emitter';
import type { Cluster } from 'ioredis';
import { Server } from 'socket.io';
import type { RedisClient } from '../redis/connection.js';
import type { LoginResult } from '../registrations/login-result.js';
import { INTERNAL_EVENTS } from './events.js';
import { socketAdapter } from './adapter.js';

/** What a Notifier publishes through: a server-side emit every web node hears. */
export interface ServerSideEmitter {
  serverSideEmit(event: string, ...args: unknown[]): void;
  close(): void;
}

/**
 * How workers reach sockets on any web node: one PUBLISH on the adapter's own request channel
 * (same key, KEY_PREFIX included), never a call to a node over HTTP. Each node hands the event
 * to its own sockets of that registration (delivery.ts), filling in what only it knows (the PIN).
 */
export class Notifier {
  /** `emitter`: the adapter's emitter (one server or Sentinel) or shardedEmitter() (a Redis Cluster). */
  constructor(private readonly emitter: ServerSideEmitter) {}

  /** The classic adapter's emitter on `channelKey`: one PUBLISH an event, at most once (a client that missed it polls). */
  static classic(redis: RedisClient, channelKey: string): Notifier {
    const emitter = new Emitter(redis, { key: channelKey });
    return new Notifier({ serverSideEmit: (event, ...args) => emitter.serverSideEmit(event, ...args), close: () => undefined });
  }

  /** Lets what the emitter holds go (the sharded one's Socket.IO server and subscriber). */
  close(): void {
    this.emitter.close();
  }

  /** `auth-success` to the sockets that registered the PIN, on whichever node they are. */
  loginSucceeded(pinHash: string, result: LoginResult): void {
    this.emitter.serverSideEmit(INTERNAL_EVENTS.authSuccess, pinHash, result);
  }

  /** `pin-expired {pin}` to the sockets that registered this registration (the PIN is in no job or key). */
  pinExpired(pinHash: string, pinId: string): void {
    this.emitter.serverSideEmit(INTERNAL_EVENTS.pinExpired, pinHash, pinId);
  }

  /** `awaiting-confirmation {pinId}`: the person is being asked in the chat. */
  awaitingConfirmation(pinHash: string, pinId: string): void {
    this.emitter.serverSideEmit(INTERNAL_EVENTS.awaitingConfirmation, pinHash, pinId);
  }

  /** `pin-error {error: LOGIN_DENIED}`: the person answered NO; the registration has ended. */
  loginDenied(pinHash: string, pinId: string): void {
    this.emitter.serverSideEmit(INTERNAL_EVENTS.loginDenied, pinHash, pinId);
  }

  /** `pin-error {error: LOGIN_FAILED}`: the login failed for good in the worker; start again. */
  loginFailed(pinHash: string, pinId: string): void {
    this.emitter.serverSideEmit(INTERNAL_EVENTS.loginFailed, pinHash, pinId);
  }
}

/**
 * The sharded adapter (Redis 7 sharded pub/sub, what a Redis Cluster needs) has no emitter
 * package (socketio/socket.io-redis-emitter#127): a worker emits through a Socket.IO server of
 * its own, attached to no HTTP server, on the same adapter as the web nodes (documented
 * `serverSideEmit`). It subscribes the adapter's two namespace channels, so it also receives
 * (and drops) other workers' emits. `close()` lets `sub` go.
 */
export function shardedEmitter(pub: Cluster, sub: Cluster, channelPrefix: string): ServerSideEmitter {
  const io = new Server({ serveClient: false, adapter: socketAdapter(true, pub, sub, channelPrefix) });
  return {
    serverSideEmit: (event, ...args) => io.serverSideEmit(event, ...args),
    // the server has no engine or timer to stop; its subscriptions end with the connection
    // (never awaiting an unsubscribe, which would wait for a Redis that is gone)
    close: () => sub.disconnect(),
  };
}
