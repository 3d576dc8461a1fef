import { Emitter } from '@socket.io/redis-emitter';
import type { Redis } from 'ioredis';
import type { LoginResult } from '../auth/login-result.js';
import { INTERNAL_EVENTS } from './events.js';

/**
 * How workers reach sockets on any web node: one PUBLISH on the adapter's own request channel
 * (same key, KEY_PREFIX included), never a call to a node over HTTP. Each node hands the event
 * to its own sockets of that registration (delivery.ts), filling in what only it knows (the PIN).
 */
export class Notifier {
  private readonly emitter: Emitter;

  constructor(redis: Redis, channelKey: string) {
    this.emitter = new Emitter(redis, { key: channelKey });
  }

  /** `auth-success` to the sockets that registered the PIN, on whichever node they are. */
  loginSucceeded(pinHash: string, result: LoginResult): void {
    this.emitter.serverSideEmit(INTERNAL_EVENTS.authSuccess, pinHash, result);
  }

  /** `pin-expired {pin}` to the sockets that registered this registration (the PIN is in no job or key). */
  pinExpired(pinHash: string, pinId: string): void {
    this.emitter.serverSideEmit(INTERNAL_EVENTS.pinExpired, pinHash, pinId);
  }
}
