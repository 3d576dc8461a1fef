import type { Socket } from 'socket.io';
import { AppError, toAppError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { ChannelHealth } from '../messaging/health.js';
import type { Registrations } from '../registrations/service.js';
import { validate } from '../validation/validate.js';
import { CLIENT_EVENTS, SERVER_EVENTS, type AckPayload, type PinErrorPayload, type PinRegisteredPayload } from './events.js';
import { forget, heldCount, heldPin, hold, MAX_PINS_PER_CONNECTION, release, socketData } from './socket-state.js';
import type { EventThrottle } from './throttle.js';

/** What the socket events use of the process's services (services.ts's bag has it). */
export interface HandlerServices {
  registrations: Registrations;
  log: Logger;
  /** the number register-pin tells the client to write to (a healthy one) */
  health: Pick<ChannelHealth, 'writeTo'>;
}

type Ack = (response: AckPayload) => void;

/** Socket.IO passes the acknowledgement callback, when the client asked for one, as the last argument. */
function splitArgs(args: unknown[]): { payload: unknown; ack: Ack | undefined } {
  const last = args[args.length - 1];
  const ack = typeof last === 'function' ? (last as Ack) : undefined;
  return { payload: ack ? (args.length > 1 ? args[0] : undefined) : args[0], ack };
}

/**
 * `register-pin` and `cancel-auth`, with the validation and limits of HTTP, answered by event
 * and by acknowledgement. Every incoming event, known or not, first spends the connection's
 * budget; every failure becomes `pin-error {error, message}`, never a throw.
 * The listeners are made once per node and shared by every socket (Socket.IO calls them with
 * the socket as `this`): a set of closures per connection cost ≈ 0.5 KB of heap on each of
 * 10,000 idle sockets.
 */
export function createHandlers(services: HandlerServices, throttle: EventThrottle): (socket: Socket) => void {
  const { registrations, log } = services;

  const errorBody = (socket: Socket, err: unknown): PinErrorPayload => {
    const e = toAppError(err);
    if (e.status >= 500) log.error('socket event failed', { code: e.code, socketId: socket.id, error: String(e.cause ?? e.message) });
    return {
      error: e.code,
      message: e.message,
      ...(e.details !== undefined ? { details: e.details } : {}),
      ...(e.retryAfter !== undefined ? { retryAfter: e.retryAfter } : {}),
    };
  };
  const fail = (socket: Socket, err: unknown, ack: Ack | undefined): void => {
    const body = errorBody(socket, err);
    socket.emit(SERVER_EVENTS.pinError, body);
    ack?.({ success: false, ...body });
  };

  const registerPin = async (socket: Socket, payload: unknown, ack: Ack | undefined): Promise<void> => {
    const data = socketData(socket);
    const { pin, emojiString, idempotencyKey } = validate.registerPin(payload);
    // Gone meanwhile: joining a room now would leave a dead socket id in it for good.
    if (!socket.connected) return;
    const pinHash = registrations.pinKey(pin);
    const before = heldPin(socket, pinHash);
    if (!before && heldCount(socket) >= MAX_PINS_PER_CONNECTION) {
      throw new AppError('RATE_LIMITED', `At most ${MAX_PINS_PER_CONNECTION} pending registrations per connection`, { retryAfter: 60 });
    }
    // Follow the registration before it exists, so a login landing meanwhile still reaches us;
    // its events are held back until the answer says whether we may follow it (socket-state.ts).
    const held = before ?? { pin, pinId: null };
    if (!before) hold(socket, pinHash, held);
    const reg = await registrations.register(pin, emojiString, { ip: data.ip, via: 'socket', origin: data.origin }, idempotencyKey).catch((err: unknown) => {
      if (!before && heldPin(socket, pinHash) === held) forget(socket, pinHash);
      throw err;
    });
    const following = heldPin(socket, pinHash) === held;
    // A decoy (the PIN is another registration's): answered like a creation, but this socket
    // must not follow that registration's events, nor see those that came meanwhile.
    if (reg.decoy && !before && following) forget(socket, pinHash);
    if (!reg.decoy && following) held.pinId = reg.pinId;
    if (!reg.decoy) log.info(reg.created ? 'pin registered' : 'pin re-registered', { pinId: reg.pinId, via: 'socket' });
    const writeTo = await services.health.writeTo();
    const answer: PinRegisteredPayload = {
      pinId: reg.pinId,
      expiresIn: reg.expiresIn,
      emojiString: reg.emojiString,
      ...(writeTo ? { whatsappNumber: writeTo.number } : {}),
    };
    socket.emit(SERVER_EVENTS.pinRegistered, answer);
    ack?.({ success: true, ...answer });
    if (reg.decoy || !following) return;
    const hadDeferred = held.deferred !== undefined;
    release(socket, pinHash, held);
    // Not held any more: auth-success (or an end) came while we waited, and was sent just now.
    if (heldPin(socket, pinHash) !== held) return;
    // Re-joined while the person is being asked in the chat: say so (YES, NO or expiry follow).
    if (reg.awaitingConfirmation && !hadDeferred) socket.emit(SERVER_EVENTS.awaitingConfirmation, { pinId: reg.pinId });
    if (reg.verified) {
      // Re-joined after the login happened: hand over the uncollected result now (not consumed).
      const result = await registrations.peekResult(pin);
      if (heldPin(socket, pinHash) !== held) return; // delivered by the worker's event meanwhile
      forget(socket, pinHash);
      if (result) socket.emit(SERVER_EVENTS.authSuccess, result);
    }
  };

  const cancelAuth = async (socket: Socket, payload: unknown, ack: Ack | undefined): Promise<void> => {
    const data = socketData(socket);
    const { pin } = validate.cancelAuth(payload);
    // Cancelling answers whether a PIN exists: it spends the registration budget, and a miss the
    // wrong-guess budget (the cancel script, atomically).
    const { pinId } = await registrations.cancel(pin, { ip: data.ip, via: 'socket' });
    forget(socket, registrations.pinKey(pin));
    log.info('pin cancelled', { pinId, via: 'socket' });
    ack?.({ success: true, pinId });
  };

  async function onAnyEvent(this: Socket, event: unknown, ...args: unknown[]): Promise<void> {
    const { payload, ack } = splitArgs(args);
    try {
      const verdict = await throttle.check(this.id);
      if (!this.connected) return; // cut or gone while events of the same burst were queued
      if (!verdict.admit) {
        if (verdict.cut) {
          log.warn('socket cut for flooding', { socketId: this.id, ip: socketData(this).ip });
          this.disconnect(true);
          return;
        }
        const limited = new AppError('RATE_LIMITED', 'Too many events on this connection', { retryAfter: verdict.retryAfter });
        if (verdict.notify) this.emit(SERVER_EVENTS.pinError, errorBody(this, limited));
        ack?.({ success: false, ...errorBody(this, limited) });
        return;
      }
      if (event === CLIENT_EVENTS.registerPin) await registerPin(this, payload, ack);
      else if (event === CLIENT_EVENTS.cancelAuth) await cancelAuth(this, payload, ack);
      else throw new AppError('VALIDATION_ERROR', `Unknown event ${String(event).slice(0, 64)}`);
    } catch (err) {
      fail(this, err, ack);
    }
  }
  function onDisconnect(this: Socket): void {
    throttle.release(this.id);
  }

  return (socket: Socket): void => {
    socket.onAny(onAnyEvent);
    socket.on('disconnect', onDisconnect);
  };
}
