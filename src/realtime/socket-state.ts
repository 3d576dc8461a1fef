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
  pins: Map<string, HeldPin>;
}

/** More than any honest client needs; bounds a connection's memory. */
export const MAX_PINS_PER_CONNECTION = 16;

/**
 * Kept beside the socket, not in `socket.data`: Socket.IO hands `socket.data` to other nodes
 * (fetchSockets, through Redis), and the PIN must never travel there.
 */
const states = new WeakMap<Socket, SocketData>();

export function initSocketData(socket: Socket, ip: string, origin: Origin = originOf(undefined, ip)): SocketData {
  const data: SocketData = { ip, origin, pins: new Map() };
  states.set(socket, data);
  return data;
}

export function socketData(socket: Socket): SocketData {
  return states.get(socket) ?? initSocketData(socket, socket.handshake.address);
}

/** Starts following a registration: joins its room, so events published from now on reach the socket. */
export function hold(socket: Socket, pinHash: string, held: HeldPin): void {
  socketData(socket).pins.set(pinHash, held);
  void socket.join(registrationRoom(pinHash));
}

/** Stops following a registration (delivered, expired, cancelled or failed). */
export function forget(socket: Socket, pinHash: string): void {
  socketData(socket).pins.delete(pinHash);
  void socket.leave(registrationRoom(pinHash));
}
