import { io, type Socket } from 'socket.io-client';

/**
 * Socket.IO clients as an app holds them: websocket transport (no sticky sessions needed),
 * no automatic reconnection (a dropped client must show up as missing, not be hidden).
 */
export function connectAll(urls: readonly string[], count: number, batch = 100): Promise<Socket[]> {
  return inBatches(count, batch, (i) => connect(urls[i % urls.length]!));
}

export function connect(url: string, timeoutMs = 10_000): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = io(url, { transports: ['websocket'], reconnection: false, forceNew: true, timeout: timeoutMs });
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (err) => {
      socket.close();
      reject(err);
    });
  });
}

export interface Registered {
  pinId: string;
}

/** `register-pin` with an acknowledgement; rejects with the error code when refused. */
export async function registerPin(socket: Socket, pin: string, emojiString: string, timeoutMs = 10_000): Promise<Registered> {
  const answer = (await socket.timeout(timeoutMs).emitWithAck('register-pin', { pin, emojiString })) as {
    success: boolean;
    pinId?: string;
    error?: string;
  };
  if (!answer.success || typeof answer.pinId !== 'string') throw new Error(`register-pin refused: ${answer.error ?? 'no answer'}`);
  return { pinId: answer.pinId };
}

/** Runs `make(i)` for i < count, `batch` at a time, keeping the order. */
export async function inBatches<T>(count: number, batch: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < count; start += batch) {
    const end = Math.min(count, start + batch);
    out.push(...(await Promise.all(Array.from({ length: end - start }, (_, k) => make(start + k)))));
  }
  return out;
}

export function closeAll(sockets: readonly Socket[]): void {
  for (const s of sockets) s.close();
}
