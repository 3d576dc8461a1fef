import type { Socket } from 'socket.io';
import { originOf, type Origin } from '../registrations/origin.js';
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
  /**
   * Events of the registration that arrived while `register-pin` was in flight (pinId null),
   * held back until its answer says the socket may follow it: a decoy (the caller named a PIN
   * that is another's) never sees them.
   */
  deferred?: DeferredEvent[];
}

export interface DeferredEvent {
  event: string;
  payload: unknown;
  /** the registration named by the event; undefined: any (auth-success carries none) */
  pinId?: string;
  /** the socket lets the registration go once it is sent */
  ends: boolean;
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

/** engine.io's connection under a Socket.IO socket (`socket.conn`): one per client. */
export type Connection = Socket['conn'];

/**
 * Kept beside the connection, not in `socket.data`: Socket.IO hands `socket.data` to other nodes
 * (fetchSockets, through Redis), and the PIN must never travel there. One record per
 * connection, made when its handshake is read (server.ts), so nothing else per client is kept
 * between the handshake and the Socket.IO socket.
 */
const states = new WeakMap<Connection, SocketData>();

export function initConnectionData(conn: Connection, ip: string, origin: Origin = originOf(undefined, ip)): SocketData {
  const data: SocketData = { ip, origin, pins: null };
  states.set(conn, data);
  return data;
}

/** The record of a connection, if its handshake was read. */
export function connectionData(conn: Connection): SocketData | undefined {
  return states.get(conn);
}

/**
 * A Socket.IO socket starts following nothing. Only the main namespace exists, so this matters
 * only for a client that disconnects it and connects it again over the same connection: the
 * rooms of the socket before were left with it.
 */
export function startSocket(socket: Socket): void {
  socketData(socket).pins = null;
}

export function socketData(socket: Socket): SocketData {
  return states.get(socket.conn) ?? initConnectionData(socket.conn, socket.handshake.address);
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
  data.pins ??= new Map();
  data.pins.set(pinHash, held);
  void socket.join(registrationRoom(pinHash));
}

/**
 * Sends a registration's event to a socket that follows it, or, while its `register-pin` is in
 * flight, holds it back for `release`.
 */
export function tell(socket: Socket, pinHash: string, held: HeldPin, e: DeferredEvent): void {
  if (held.pinId === null) {
    held.deferred ??= [];
    held.deferred.push(e);
    return;
  }
  socket.emit(e.event, e.payload);
  if (e.ends) forget(socket, pinHash);
}

/** `register-pin` answered (not a decoy): the events held back for this registration go out. */
export function release(socket: Socket, pinHash: string, held: HeldPin): void {
  const deferred = held.deferred;
  held.deferred = undefined;
  for (const e of deferred ?? []) {
    if (heldPin(socket, pinHash) !== held) return;
    if (e.pinId === undefined || e.pinId === held.pinId) tell(socket, pinHash, held, e);
  }
}

/** Stops following a registration (delivered, expired, cancelled or failed); anything held back is dropped. */
export function forget(socket: Socket, pinHash: string): void {
  const data = socketData(socket);
  if (data.pins?.delete(pinHash) && data.pins.size === 0) data.pins = null;
  void socket.leave(registrationRoom(pinHash));
}
