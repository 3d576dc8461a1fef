import { ServerResponse, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Server, Socket } from 'socket.io';

/** engine.io's socket as this module reads it (its type is not exported by Socket.IO). */
interface EngineSocket {
  request: IncomingMessage | null;
  remoteAddress: string;
  transport: { name: string; removeAllListeners(event: string): unknown };
}

/** engine.io's stand-in for the ServerResponse of an upgrade (middlewares get it as `res`). */
interface StandInResponse {
  req: IncomingMessage | null;
  socket: Duplex;
}

/**
 * Cuts what a Socket.IO connection keeps of its handshake to what this service reads from it.
 * Left alone, every websocket connection holds until it closes:
 * - its upgrade request on engine.io's socket (≈ 4 KB of heap: headers, URL, parser leftovers;
 *   Socket.IO's memory guide sets it to null once read);
 * - engine.io's stand-in response for the upgrade, through the 'close' listener its constructor
 *   puts on the TCP socket for middlewares that wait on it (none here), and the request behind
 *   it (≈ 0.6 KB);
 * - the transport's 'headers' listener, which only the polling transport ever emits.
 * `read` takes what is needed from the request while it is there; the returned function hands
 * it over once, to the Socket.IO connection handler, and forgets it.
 * `socket.handshake.headers` is empty as a result.
 */
export function trimHandshakes<T>(
  httpServer: HttpServer,
  io: Server,
  read: (request: IncomingMessage, remoteAddress: string) => T,
): (socket: Socket) => T | undefined {
  // The stand-in's listener is told apart by count: Socket.IO attached engine.io's 'upgrade'
  // listener already, so this one runs just before it, and engine.io's middlewares run after
  // its handler made the stand-in. Exactly one more 'close' listener means it is the stand-in's.
  const closeListenersBefore = new WeakMap<Duplex, number>();
  httpServer.prependListener('upgrade', (_req: IncomingMessage, socket: Duplex) => {
    closeListenersBefore.set(socket, socket.listenerCount('close'));
  });
  // Any other count (another engine.io, another 'upgrade' listener adding its own): the stand-in
  // stays, but lets its request go once connected.
  const keptResponses = new WeakMap<IncomingMessage, StandInResponse>();
  io.engine.use((req: IncomingMessage, res: ServerResponse | StandInResponse, next: () => void) => {
    if (!(res instanceof ServerResponse)) {
      const before = closeListenersBefore.get(res.socket);
      const listeners = res.socket.rawListeners('close') as Array<() => void>;
      if (before !== undefined && listeners.length === before + 1) res.socket.removeListener('close', listeners[before]!);
      else keptResponses.set(req, res);
    }
    next();
  });

  const readings = new WeakMap<object, T>();
  io.engine.on('connection', (raw: EngineSocket) => {
    if (raw.request) {
      readings.set(raw, read(raw.request, raw.remoteAddress));
      const res = keptResponses.get(raw.request);
      if (res) res.req = null;
    }
    raw.request = null;
    if (raw.transport.name === 'websocket') raw.transport.removeAllListeners('headers');
  });

  return (socket) => {
    const reading = readings.get(socket.conn);
    readings.delete(socket.conn);
    return reading;
  };
}

/** What this module reads of an EventEmitter: Node's listener table (a documented-legacy field). */
interface ListenerTable {
  _events?: Record<string | symbol, unknown>;
}

/**
 * An empty object without a prototype of its own: tables made from it find nothing Object has
 * (no `toString` listener), exactly like Node's `{ __proto__: null }` tables.
 */
const NO_LISTENERS: object = Object.create(null);

/**
 * The events that end a connection's emitters: each emits 'close' once (engine.io's socket and
 * ws's guard it with their ready state, engine.io's transport hears it from ws's once), and
 * engine.io's 'error' handler closes the transport and takes its own listeners off.
 */
const ENDING_EVENTS: ReadonlySet<string | symbol> = new Set(['close', 'error']);

/**
 * The listener inside Node's `once` wrapper (`onceWrapper` bound to its state, the listener on
 * its `listener` property), else the entry itself. A wrapper costs ≈ 190 B besides its listener
 * (the state object, the bound function, the property store its `listener` needs); for an event
 * that comes once, the plain listener behaves the same, and `removeListener` with the original
 * function still finds it.
 */
function unwrapOnce(entry: unknown): unknown {
  if (typeof entry !== 'function' || entry.name !== 'bound onceWrapper') return entry;
  const listener = (entry as { listener?: unknown }).listener;
  return typeof listener === 'function' ? listener : entry;
}

/**
 * Gives an EventEmitter a listener table V8 keeps in fast mode, with the same entries. Node makes
 * each table as `{ __proto__: null }`, which V8 holds as a hash table (dictionary mode): ≈ 350 B
 * for five events, ≈ 170 B as a fast object (measured). A connection keeps four such emitters
 * for its lifetime. A later `removeListener` may turn the table back into a dictionary; every
 * lookup behaves the same either way (own keys only; a missing event is undefined). The
 * one-time listeners of the ending events lose their `once` wrappers (four a connection,
 * registered by engine.io on its socket, its transport and the ws socket under it).
 */
function compactListeners(emitter: unknown): void {
  const table = (emitter as ListenerTable | null | undefined)?._events;
  if (typeof table !== 'object' || table === null) return;
  const fast = Object.create(NO_LISTENERS) as Record<string | symbol, unknown>;
  for (const key of Reflect.ownKeys(table)) {
    const entry = table[key];
    fast[key] = !ENDING_EVENTS.has(key) ? entry : Array.isArray(entry) ? entry.map(unwrapOnce) : unwrapOnce(entry);
  }
  (emitter as ListenerTable)._events = fast;
}

/**
 * Gives an array the room of its entries only. An array made empty and then pushed to keeps room
 * for 17 entries (≈ 150 B); a copy holds exactly what it has. Three such arrays of a connection
 * get their entries when it opens and keep them unchanged while it is open. The libraries read
 * each array from its property every time, so a replaced one is the one they use.
 */
function exactArray(holder: unknown, key: string): void {
  const table = holder as Record<string, unknown> | null | undefined;
  const entries = table?.[key];
  if (Array.isArray(entries)) table![key] = entries.slice();
}

/** engine.io's socket and transport as compactConnection reads them. */
interface EngineConnection {
  transport: { socket?: unknown };
  /** the transport's clean-ups, one pushed per transport set */
  cleanupFn?: unknown[];
  once(event: 'upgrade', listener: (transport: { socket?: unknown }) => void): unknown;
}

/** What compactConnection reads of a Socket.IO socket: its catch-all listeners, its client's packet decoder. */
interface SocketInternals {
  _anyListeners?: unknown[];
  client?: { decoder?: { _callbacks?: Record<string, unknown> } };
}

/**
 * Compacts the listener tables a connection keeps while it is open: the Socket.IO socket (call
 * this once its handlers are bound), engine.io's socket, its transport and the websocket under
 * it; after a polling connection upgrades, the new transport's too. The arrays a connection
 * fills once are cut to size: the socket's catch-all listeners (the event dispatcher), the
 * decoder's 'decoded' listeners and engine.io's transport clean-ups.
 */
export function compactConnection(socket: Socket): void {
  const conn = socket.conn as unknown as EngineConnection;
  const internals = socket as unknown as SocketInternals;
  exactArray(internals, '_anyListeners');
  // component-emitter's table: '$' and the event's name
  exactArray(internals.client?.decoder?._callbacks, '$decoded');
  exactArray(conn, 'cleanupFn');
  compactListeners(socket);
  compactListeners(conn);
  compactListeners(conn.transport);
  compactListeners(conn.transport.socket);
  if (socket.conn.transport.name !== 'websocket') {
    // engine.io's socket keeps its fast table: V8 undoes the addition of the one-time
    // listener's key when it is deleted, as it was the last key added
    conn.once('upgrade', (transport) => {
      compactListeners(transport);
      compactListeners(transport.socket);
      // emitted once the polling transport's clean-up ran and the websocket's was pushed
      exactArray(conn, 'cleanupFn');
    });
  }
}
