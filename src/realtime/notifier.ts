import { Emitter } from '@socket.io/redis-emitter';
import type { RedisClient } from '../redis/connection.js';
import type { LoginResult } from '../registrations/login-result.js';
import { INTERNAL_EVENTS } from './events.js';

/**
 * How workers reach sockets on any web node: one PUBLISH on the adapter's own request channel
 * (same key, KEY_PREFIX included), never a call to a node over HTTP. Each node hands the event
 * to its own sockets of that registration (delivery.ts), filling in what only it knows (the PIN).
 */
export class Notifier {
  private readonly emitter: { serverSideEmit(event: string, ...args: unknown[]): void };

  /** `sharded`: the web nodes use the sharded adapter (cluster mode), see ShardedEmitter. */
  constructor(redis: RedisClient, channelKey: string, sharded = false) {
    this.emitter = sharded ? new ShardedEmitter(redis, channelKey) : new Emitter(redis, { key: channelKey });
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

/** socket.io-adapter's ClusterAdapter message type for a server-side emit. */
const SERVER_SIDE_EMIT = 9;

/**
 * The sharded adapter (Redis 7 sharded pub/sub, what a Redis Cluster needs) has no emitter
 * package: this SPUBLISHes a server-side emit in its message format on its namespace channel
 * (`<channelPrefix>#/#`), which every web node SSUBSCRIBEs. The uid is no node's, so every node
 * handles it. The message is JSON: our payloads are never binary.
 */
export class ShardedEmitter {
  private readonly channel: string;

  constructor(
    private readonly redis: RedisClient,
    channelPrefix: string,
  ) {
    this.channel = `${channelPrefix}#/#`;
  }

  serverSideEmit(event: string, ...args: unknown[]): void {
    const message = JSON.stringify({ uid: 'pinauth-worker', nsp: '/', type: SERVER_SIDE_EMIT, data: { packet: [event, ...args] } });
    // at most once, as the classic emitter: a client that missed it polls or re-joins
    this.redis.spublish(this.channel, message).catch(() => undefined);
  }
}
