import { io, type ManagerOptions, type Socket, type SocketOptions } from 'socket.io-client';

/**
 * Real Socket.IO clients for the tests (websocket transport, as a mobile or server client
 * would use across nodes without sticky sessions), and small ways to wait for their events.
 */
export interface Received {
  event: string;
  payload: unknown;
}

export interface TestClient {
  socket: Socket;
  /** every event received, in order */
  received: Received[];
  of(event: string): unknown[];
  /** the next `event` not yet taken by an earlier call, waiting up to timeoutMs */
  next<T = Record<string, unknown>>(event: string, timeoutMs?: number): Promise<T>;
  close(): void;
}

export function client(url: string, opts: Partial<ManagerOptions & SocketOptions> = {}): TestClient {
  const socket = io(url, { transports: ['websocket'], forceNew: true, reconnection: false, timeout: 10000, ...opts });
  const received: Received[] = [];
  const taken = new Map<string, number>();
  const waiters = new Set<() => void>();
  socket.onAny((event: string, payload: unknown) => {
    received.push({ event, payload });
    for (const w of [...waiters]) w();
  });
  const of = (event: string): unknown[] => received.filter((r) => r.event === event).map((r) => r.payload);
  return {
    socket,
    received,
    of,
    next<T>(event: string, timeoutMs = 10000): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const check = (): void => {
          const index = taken.get(event) ?? 0;
          const all = of(event);
          if (all.length > index) {
            taken.set(event, index + 1);
            waiters.delete(check);
            clearTimeout(timer);
            resolve(all[index] as T);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${event} in ${timeoutMs} ms; got ${JSON.stringify(received.map((r) => r.event))}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => void socket.close(),
  };
}

/** A client that has connected (rejects on connect_error). */
export async function connected(url: string, opts: Partial<ManagerOptions & SocketOptions> = {}): Promise<TestClient> {
  const c = client(url, opts);
  await new Promise<void>((resolve, reject) => {
    if (c.socket.connected) return resolve();
    c.socket.once('connect', () => resolve());
    c.socket.once('connect_error', (err) => reject(err));
  });
  return c;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `fn` over `items`, at most `width` at a time (bounded load on a 2-core machine). */
export async function inBatches<T, R>(items: T[], width: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) {
    out.push(...(await Promise.all(items.slice(i, i + width).map((item, j) => fn(item, i + j)))));
  }
  return out;
}
