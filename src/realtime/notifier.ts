import { Emitter } from '@socket.io/redis-emitter';
import type { Redis } from 'ioredis';
import type { LoginResult } from '../auth/login-result.js';
import { INTERNAL_PIN_EXPIRED, registrationRoom, SERVER_EVENTS } from './events.js';

/**
 * How workers reach sockets on any web node: through Redis, on the adapter's own channel
 * (same key, KEY_PREFIX included), never by calling a node over HTTP.
 */
export class Notifier {
  private readonly emitter: Emitter;

  constructor(redis: Redis, channelKey: string) {
    this.emitter = new Emitter(redis, { key: channelKey });
  }

  /** `auth-success` to the sockets that registered the PIN, on whichever node they are. */
  loginSucceeded(pinHash: string, result: LoginResult): void {
    this.emitter.to(registrationRoom(pinHash)).emit(SERVER_EVENTS.authSuccess, result);
  }

  /** Asks every node to send `pin-expired` with the PIN it holds in memory (the PIN is in no job or key). */
  pinExpired(pinHash: string, pinId: string): void {
    this.emitter.serverSideEmit(INTERNAL_PIN_EXPIRED, pinHash, pinId);
  }
}
