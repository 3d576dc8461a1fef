import type { Socket } from 'socket.io';
import type { RateLimiterMemory } from 'rate-limiter-flexible';
import { AppError, toAppError } from '../errors.js';
import { consumeOrThrow } from '../security/limits.js';
import type { Services } from '../services.js';
import { validate } from '../validation/validate.js';
import { CLIENT_EVENTS, registrationRoom, SERVER_EVENTS } from './events.js';

/** What a socket remembers of its registrations: the PIN, so `pin-expired` can carry it. */
export interface SocketData {
  pins: Map<string, { pin: string; pinId: string }>;
  ip: string;
}

type Ack = (response: unknown) => void;
const asAck = (v: unknown): Ack | undefined => (typeof v === 'function' ? (v as Ack) : undefined);
/** Socket.IO passes the acknowledgement last, after however many arguments the client sent. */
const split = (args: unknown[]): { payload: unknown; ack: Ack | undefined } => {
  const ack = asAck(args[args.length - 1]);
  return { payload: ack && args.length === 1 ? undefined : args[0], ack };
};

/**
 * `register-pin` and `cancel-auth`, with the same validation and limits as HTTP, answered by
 * event and by acknowledgement. Every failure becomes `pin-error {error, message}`, never a throw.
 */
export function bindHandlers(socket: Socket, services: Services, budget: RateLimiterMemory): void {
  const { registrations, limits, log } = services;
  const data = socket.data as SocketData;

  const fail = (err: unknown, ack: Ack | undefined): void => {
    const e = toAppError(err);
    if (e.status >= 500) log.error('socket event failed', { code: e.code, socketId: socket.id, error: String(e.cause ?? e.message) });
    const body = { error: e.code, message: e.message, ...(e.retryAfter !== undefined ? { retryAfter: e.retryAfter } : {}) };
    socket.emit(SERVER_EVENTS.pinError, body);
    ack?.({ success: false, ...body });
  };

  socket.on(CLIENT_EVENTS.registerPin, async (...args: unknown[]) => {
    const { payload, ack } = split(args);
    let joined: string | null = null;
    try {
      await consumeOrThrow(budget, socket.id);
      const { pin, emojiString } = validate.registerPin(payload);
      const pinHash = registrations.pinKey(pin);
      const room = registrationRoom(pinHash);
      // a conflict tells the caller "this PIN is taken": it spends from the wrong-guess budget
      const reg = await limits.guess(data.ip, 'PIN_CONFLICT', async () => {
        await limits.consume('register', data.ip);
        // Join before registering so a login landing in between still reaches this socket.
        if (!socket.rooms.has(room)) {
          await socket.join(room);
          joined = room;
        }
        return registrations.register(pin, emojiString);
      });
      data.pins.set(pinHash, { pin, pinId: reg.pinId });
      const answer = { pinId: reg.pinId, expiresIn: reg.expiresIn };
      socket.emit(SERVER_EVENTS.pinRegistered, answer);
      ack?.({ success: true, ...answer });
      if (reg.verified) {
        // re-join after the login happened: hand over the uncollected result now
        const result = await registrations.peekResult(pin);
        if (result) socket.emit(SERVER_EVENTS.authSuccess, result);
      }
    } catch (err) {
      if (joined) await socket.leave(joined);
      fail(err, ack);
    }
  });

  socket.on(CLIENT_EVENTS.cancelAuth, async (...args: unknown[]) => {
    const { payload, ack } = split(args);
    try {
      await consumeOrThrow(budget, socket.id);
      const { pin } = validate.cancelAuth(payload);
      // "no such PIN" answers a guess as check-login does: same budget
      const { pinId } = await limits.guess(data.ip, 'PIN_NOT_FOUND', () => registrations.cancel(pin));
      const pinHash = registrations.pinKey(pin);
      data.pins.delete(pinHash);
      await socket.leave(registrationRoom(pinHash));
      ack?.({ success: true, pinId });
    } catch (err) {
      fail(err, ack);
    }
  });

  // Any other event name gets a clear answer too.
  socket.onAny((event: unknown, ...args: unknown[]) => {
    if (event === CLIENT_EVENTS.registerPin || event === CLIENT_EVENTS.cancelAuth) return;
    fail(new AppError('VALIDATION_ERROR', `Unknown event ${String(event).slice(0, 64)}`), split(args).ack);
  });
}
