import type { Server, Socket } from 'socket.io';
import type { LoginResult } from '../registrations/login-result.js';
import { AppError } from '../errors.js';
import { registrationRoom, SERVER_EVENTS, type AwaitingConfirmationPayload, type PinErrorPayload, type PinExpiredPayload } from './events.js';
import { forget, heldPin, tell, type HeldPin } from './socket-state.js';

/**
 * The web node's half of worker → client events: the worker names a registration by PIN hash,
 * this node finds its own sockets that registered it (the room is a local index, no Redis
 * round trip) and sends the client event, then forgets the registration on those sockets.
 */
function holders(io: Server, pinHash: string): Array<{ socket: Socket; held: HeldPin }> {
  const out: Array<{ socket: Socket; held: HeldPin }> = [];
  for (const id of io.sockets.adapter.rooms.get(registrationRoom(pinHash)) ?? []) {
    const socket = io.sockets.sockets.get(id);
    const held = socket ? heldPin(socket, pinHash) : undefined;
    if (socket && held) out.push({ socket, held });
  }
  return out;
}

/**
 * `auth-success` to every socket of this node that registered the PIN, once each (a socket
 * whose `register-pin` is in flight gets it once that answers, unless it was a decoy).
 */
export function deliverLogin(io: Server, pinHash: string, result: LoginResult): number {
  const found = holders(io, pinHash);
  for (const { socket, held } of found) tell(socket, pinHash, held, { event: SERVER_EVENTS.authSuccess, payload: result, ends: true });
  return found.length;
}

/** `pin-expired {pin}` to the sockets that registered this very registration (same pinId). */
export function deliverExpiry(io: Server, pinHash: string, pinId: string): number {
  let sent = 0;
  for (const { socket, held } of holders(io, pinHash)) {
    if (held.pinId !== pinId) continue;
    socket.emit(SERVER_EVENTS.pinExpired, { pin: held.pin } satisfies PinExpiredPayload);
    forget(socket, pinHash);
    sent++;
  }
  return sent;
}

/** `awaiting-confirmation {pinId}`; the sockets keep following the registration (YES, NO or expiry follow). */
export function deliverAwaiting(io: Server, pinHash: string, pinId: string): number {
  let sent = 0;
  for (const { socket, held } of holders(io, pinHash)) {
    // null: register-pin still in flight on this socket: held back until it answers
    if (held.pinId !== null && held.pinId !== pinId) continue;
    tell(socket, pinHash, held, { event: SERVER_EVENTS.awaitingConfirmation, payload: { pinId } satisfies AwaitingConfirmationPayload, pinId, ends: false });
    sent++;
  }
  return sent;
}

/**
 * `pin-error {error, message}` to the registration's sockets, which then let it go: the person
 * answered NO (LOGIN_DENIED), or the login failed for good in the worker (LOGIN_FAILED).
 */
export function deliverEnded(io: Server, pinHash: string, pinId: string, code: 'LOGIN_DENIED' | 'LOGIN_FAILED'): number {
  const denied = new AppError(code);
  let sent = 0;
  for (const { socket, held } of holders(io, pinHash)) {
    if (held.pinId !== null && held.pinId !== pinId) continue;
    tell(socket, pinHash, held, {
      event: SERVER_EVENTS.pinError,
      payload: { error: denied.code, message: denied.message } satisfies PinErrorPayload,
      pinId,
      ends: true,
    });
    sent++;
  }
  return sent;
}

/** Payloads from Redis are checked before use: a foreign publisher on the channel can't crash a node. */
export function isLoginResult(v: unknown): v is LoginResult {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Partial<LoginResult>;
  return typeof r.token === 'string' && typeof r.refreshToken === 'string' && typeof r.user === 'object' && r.user !== null;
}
