import type { Socket } from 'socket.io';
import { originOf, type Origin } from '../auth/origin.js';
import { registrationRoom } from './events.js';

/**
 * What a connection remembers of the registrations it made, on the node that holds it: the PIN
 * (so `pin-expired` can carry it; the PIN is in no Redis key and no job) and the pinId.
 * The registration's room (`reg:<pinHash>`) indexes the sockets by PIN hash.
 */
export interface HeldPin {
  pin: string;
  /** null while `register-pin` is still in flight */
  pinId: string | null;
}

export interface SocketData {
  ip: string;
  /** device and masked address, from the handshake (the chat confirmation shows them) */
  origin: Origin;
  /**
   * By PIN hash; null while the connection holds none (most idle sockets: an empty Map is
   * ≈ 0.2 KB of heap on each of them).
   */
  pins: Map<string, HeldPin> | null;
}

/** More than any honest client needs; bounds a connection's memory. */
export const MAX_PINS_PER_CONNECTION = 16;

/**
 * Kept beside the socket, not in `socket.data`: Socket.IO hands `socket.data` to other nodes
 * (fetchSockets, through Redis), and the PIN must never travel there.
 */
const states = new WeakMap<Socket, SocketData>();

export function initSocketData(socket: Socket, ip: string, origin: Origin = originOf(undefined, ip)): SocketData {
  const data: SocketData = { ip, origin, pins: null };
  states.set(socket, data);
  return data;
}

export function socketData(socket: Socket): SocketData {
  return states.get(socket) ?? initSocketData(socket, socket.handshake.address);
}

/** The registration this connection follows under `pinHash`, if any. */
export function heldPin(socket: Socket, pinHash: string): HeldPin | undefined {
  return socketData(socket).pins?.get(pinHash);
}

/** How many registrations this connection follows. */
export function heldCount(socket: Socket): number {
  return socketData(socket).pins?.size ?? 0;
}

/** Starts following a registration: joins its room, so events published from now on reach the socket. */
export function hold(socket: Socket, pinHash: string, held: HeldPin): void {
  const data = socketData(socket);
  (data.pins ??= new Map()).set(pinHash, held);
  void socket.join(registrationRoom(pinHash));
}

/** Stops following a registration (delivered, expired, cancelled or failed). */
export function forget(socket: Socket, pinHash: string): void {
  const data = socketData(socket);
  if (data.pins?.delete(pinHash) && data.pins.size === 0) data.pins = null;
  void socket.leave(registrationRoom(pinHash));
}
