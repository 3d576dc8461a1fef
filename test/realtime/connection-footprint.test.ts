import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect } from 'chai';
import { Server, type Socket } from 'socket.io';
import { compactConnection, trimHandshakes } from '../../src/realtime/connection-footprint.js';
import { connected as connectedClient, type TestClient } from './clients.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
setFlagsFromString('--allow-natives-syntax');
/** V8's own answer: is the object held with a fast (hidden-class) layout rather than as a hash table? */
const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;

/** Collects twice a macrotask apart: WeakRef targets stay alive until the current job ends. */
async function collect(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
}

type Watched = { request: WeakRef<IncomingMessage>; response: WeakRef<object> };

/** The arrays a connection fills once when it opens (compactConnection cuts them to size). */
type FilledArrays = { anyListeners: unknown; decoded: unknown; cleanups: unknown };
function filledArrays(socket: Socket): FilledArrays {
  const s = socket as unknown as { _anyListeners?: unknown; client: { decoder: { _callbacks: Record<string, unknown> } } };
  return { anyListeners: s._anyListeners, decoded: s.client.decoder._callbacks.$decoded, cleanups: (socket.conn as unknown as { cleanupFn: unknown }).cleanupFn };
}
type Reading = { ua: string | undefined; ip: string };

/**
 * A real Socket.IO server in this process (so the heap can be inspected) with trimHandshakes
 * on it, and after it a middleware that watches each handshake's request and stand-in response
 * without keeping them alive, as an operator's middleware would run. `beside` adds to the HTTP
 * server before it listens. Each connection answers `echo`.
 */
function footprintServer(beside: (http: ReturnType<typeof createServer>) => void = () => undefined) {
  const http = createServer();
  const io = new Server(http, { serveClient: false });
  const take = trimHandshakes(http, io, (request, remoteAddress): Reading => ({ ua: request.headers['user-agent'], ip: remoteAddress }));
  beside(http);
  const watched: Watched[] = [];
  io.engine.use((req: IncomingMessage, res: object, next: () => void) => {
    watched.push({ request: new WeakRef(req), response: new WeakRef(res) });
    next();
  });
  const connected: Array<{ socket: Socket; reading: Reading | undefined; arrays: FilledArrays }> = [];
  io.on('connection', (socket) => {
    socket.on('echo', (value: unknown, ack: (v: unknown) => void) => ack(value));
    // as the service's event dispatcher does (handlers.ts)
    socket.onAny((event: unknown) => anyEvents.push(String(event)));
    connected.push({ socket, reading: take(socket), arrays: filledArrays(socket) });
    compactConnection(socket);
  });
  const anyEvents: string[] = [];
  const clients: TestClient[] = [];
  return {
    io,
    take,
    watched,
    connected,
    anyEvents,
    listen: () => new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve)),
    async open(opts: Parameters<typeof connectedClient>[1] = {}): Promise<TestClient> {
      const c = await connectedClient(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, { extraHeaders: { 'user-agent': 'footprint-test/1.0' }, ...opts });
      clients.push(c);
      return c;
    },
    async close(): Promise<void> {
      for (const c of clients) c.close();
      io.close();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** trimHandshakes on a real Socket.IO server: what a websocket connection keeps of its handshake once connected. */
describe('realtime: a connection keeps only what it reads of its handshake', function () {
  const server = footprintServer();
  const { take, watched, connected, open } = server;
  before(() => server.listen());
  after(() => server.close());

  it('a websocket connection lets its upgrade request and stand-in response go, and still works', async function () {
    const first = watched.length;
    const c = await open();
    expect(watched.length).to.equal(first + 1);
    const { socket, reading } = connected[connected.length - 1]!;
    // what `read` took reached the connection handler, once
    expect(reading).to.deep.equal({ ua: 'footprint-test/1.0', ip: '127.0.0.1' });
    expect(take(socket)).to.equal(undefined);
    expect(socket.handshake.headers).to.deep.equal({});
    await collect();
    expect(watched[first]!.request.deref(), 'upgrade request').to.equal(undefined);
    expect(watched[first]!.response.deref(), 'stand-in response').to.equal(undefined);
    // the connection is intact both ways, and its close still reaches the server
    expect(await c.socket.timeout(5000).emitWithAck('echo', 'ping')).to.equal('ping');
    const gone = new Promise<string>((resolve) => socket.once('disconnect', resolve));
    c.close();
    expect(await gone).to.equal('client namespace disconnect');
  });

  it("a websocket transport drops the 'headers' listener only the polling transport fires", async function () {
    await open();
    const { socket } = connected[connected.length - 1]!;
    expect(socket.conn.transport.name).to.equal('websocket');
    expect(socket.conn.transport.listenerCount('headers')).to.equal(0);
  });

  it('a polling connection reads the same, upgrades, and keeps working', async function () {
    const c = await open({ transports: ['polling', 'websocket'] });
    const { socket, reading } = connected[connected.length - 1]!;
    expect(reading).to.deep.equal({ ua: 'footprint-test/1.0', ip: '127.0.0.1' });
    await new Promise<void>((resolve) => (socket.conn.transport.name === 'websocket' ? resolve() : socket.conn.once('upgrade', () => resolve())));
    expect(await c.socket.timeout(5000).emitWithAck('echo', { n: 1 })).to.deep.equal({ n: 1 });
  });

  it("a connection's listener tables are fast objects holding the same listeners, and events still flow", async function () {
    const c = await open();
    const { socket } = connected[connected.length - 1]!;
    type Emitter = { _events: object; eventNames(): Array<string | symbol>; listenerCount(event: string): number };
    const conn = socket.conn as unknown as Emitter & { transport: Emitter & { socket: Emitter } };
    const tables: Array<[string, Emitter, string[]]> = [
      ['Socket.IO socket', socket as unknown as Emitter, ['echo']],
      ["engine.io's socket", conn, ['data', 'close']],
      ['websocket transport', conn.transport, ['packet', 'close']],
      ['ws socket', conn.transport.socket, ['message', 'close']],
    ];
    for (const [name, emitter, events] of tables) {
      expect(hasFastProperties(emitter._events), name).to.equal(true);
      expect(emitter.eventNames(), name).to.include.members(events);
      // nothing inherited answers as a listener
      expect(emitter.listenerCount('toString'), name).to.equal(0);
    }
    expect(await c.socket.timeout(5000).emitWithAck('echo', 'fast')).to.equal('fast');
    // events nobody listens for, named like Object's members, are ignored, not called
    for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) c.socket.emit(name, 1);
    expect(await c.socket.timeout(5000).emitWithAck('echo', 'after')).to.equal('after');
    const gone = new Promise<string>((resolve) => socket.once('disconnect', resolve));
    c.close();
    expect(await gone).to.equal('client namespace disconnect');
  });

  it('the arrays a connection fills when it opens are copies holding the same entries, and still work', async function () {
    const c = await open();
    const { socket, arrays } = connected[connected.length - 1]!;
    const now = filledArrays(socket);
    for (const name of ['anyListeners', 'decoded', 'cleanups'] as const) {
      expect(now[name], name).to.be.an('array').that.is.not.empty;
      expect(now[name], name).to.not.equal(arrays[name]);
      expect(now[name], name).to.deep.equal(arrays[name]);
    }
    // the catch-all listener and the decoder's listener still run; closing runs the clean-ups
    const seen = server.anyEvents.length;
    expect(await c.socket.timeout(5000).emitWithAck('echo', 'copied')).to.equal('copied');
    expect(server.anyEvents.slice(seen)).to.deep.equal(['echo']);
    const closed = new Promise<void>((resolve) => socket.conn.once('close', () => resolve()));
    c.close();
    await closed;
    expect(filledArrays(socket).cleanups).to.deep.equal([]);
  });

  it("the one-time 'close' and 'error' listeners are plain, and a connection still ends once", async function () {
    const c = await open();
    const { socket } = connected[connected.length - 1]!;
    type Emitter = { _events: Record<string, unknown> };
    const conn = socket.conn as unknown as Emitter & { transport: Emitter & { socket: Emitter } };
    const entries = (e: Emitter, event: string): unknown[] => [e._events[event]].flat().filter((l) => l !== undefined);
    const ending = [...entries(conn, 'close'), ...entries(conn.transport, 'close'), ...entries(conn.transport, 'error'), ...entries(conn.transport.socket, 'close')];
    expect(ending.length).to.be.at.least(4);
    for (const listener of ending) expect((listener as { name: string }).name).to.not.equal('bound onceWrapper');
    const clients = server.io.engine.clientsCount;
    const reasons: string[] = [];
    socket.on('disconnect', (reason: string) => reasons.push(reason));
    const closed = new Promise<void>((resolve) => socket.conn.once('close', () => resolve()));
    c.close();
    await closed;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reasons).to.deep.equal(['client namespace disconnect']);
    expect(server.io.engine.clientsCount).to.equal(clients - 1);
    // engine.io's clean-up took its listeners off the transport, the unwrapped ones included
    expect(entries(conn.transport, 'close')).to.have.length(0);
  });

  it('a broken frame from the client ends its connection as a transport error, once, and the server goes on', async function () {
    const c = await open();
    const { socket } = connected[connected.length - 1]!;
    const clients = server.io.engine.clientsCount;
    const reasons: string[] = [];
    socket.on('disconnect', (reason: string) => reasons.push(reason));
    const closed = new Promise<void>((resolve) => socket.conn.once('close', () => resolve()));
    // a masked text frame with RSV1 set, which no extension here allows: ws refuses it (1002)
    const engine = (c.socket.io as unknown as { engine: { transport: { ws: { _socket: Duplex } } } }).engine;
    engine.transport.ws._socket.write(Buffer.from([0xc1, 0x80, 1, 2, 3, 4]));
    await closed;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reasons).to.deep.equal(['transport error']);
    expect(server.io.engine.clientsCount).to.equal(clients - 1);
    const other = await open();
    expect(await other.socket.timeout(5000).emitWithAck('echo', 'still up')).to.equal('still up');
  });

  it("a polling connection's new transport gets fast tables once it upgrades", async function () {
    const c = await open({ transports: ['polling', 'websocket'] });
    const { socket } = connected[connected.length - 1]!;
    await new Promise<void>((resolve) => (socket.conn.transport.name === 'websocket' ? resolve() : socket.conn.once('upgrade', () => setImmediate(resolve))));
    const transport = socket.conn.transport as unknown as { _events: object; socket: { _events: object } };
    expect(socket.conn.transport.name).to.equal('websocket');
    // the upgrade's own one-time listener came off engine.io's socket: its table is made again
    expect(hasFastProperties((socket.conn as unknown as { _events: object })._events), "engine.io's socket").to.equal(true);
    expect(hasFastProperties(transport._events), 'websocket transport').to.equal(true);
    expect(hasFastProperties(transport.socket._events), 'ws socket').to.equal(true);
    // the polling transport's clean-up ran; the websocket's, pushed by the upgrade, is the one left
    expect(filledArrays(socket).cleanups).to.be.an('array').with.length(1);
    expect(await c.socket.timeout(5000).emitWithAck('echo', 'upgraded')).to.equal('upgraded');
  });

  it('many connections leave none of their handshakes behind', async function () {
    const first = watched.length;
    await Promise.all(Array.from({ length: 20 }, () => open()));
    await collect();
    const kept = watched.slice(first).filter((w) => w.request.deref() !== undefined || w.response.deref() !== undefined);
    expect(watched.length - first).to.equal(20);
    expect(kept.length).to.equal(0);
  });
});

describe("realtime: when the stand-in's listener cannot be told apart, the upgrade request still goes", function () {
  // another 'upgrade' listener after engine.io's, adding a 'close' listener of its own
  const server = footprintServer((http) => http.on('upgrade', (_req: IncomingMessage, socket: Duplex) => socket.once('close', () => undefined)));
  before(() => server.listen());
  after(() => server.close());

  it('keeps the stand-in (no listener is taken off by guess) and lets the request go', async function () {
    const c = await server.open();
    await collect();
    expect(server.watched).to.have.length(1);
    expect(server.watched[0]!.response.deref(), 'stand-in response').to.not.equal(undefined);
    expect(server.watched[0]!.request.deref(), 'upgrade request').to.equal(undefined);
    expect(await c.socket.timeout(5000).emitWithAck('echo', 1)).to.equal(1);
  });
});
