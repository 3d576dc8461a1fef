import type { IncomingMessage, ServerResponse } from 'node:http';
import { Stream } from 'node:stream';
import type { Middleware } from 'koa';
import type { AppState } from './context.js';

/**
 * How much of a refused body is read and thrown away after the answer, and for how long (from
 * the answer), before the connection is cut anyway: four times the largest body the service
 * takes (the webhook's 1 MiB), and time enough for it on a busy machine. Nobody can hold the
 * connection or make the node read more than this.
 */
export const LINGER_BYTES = 4 * 1024 * 1024;
export const LINGER_MS = 2_000;
/**
 * Lingering closes a process runs at once; past them a refusal closes at once, as it did before
 * (its client may see a reset instead of the answer). Legitimate clients rarely have a refusal
 * still uploading; an attacker refused on many connections would otherwise make the node read
 * and throw away LINGER_BYTES on each (CPU, and garbage: 200 refused 1 MiB uploads raised RSS
 * by 20-30 MiB more than closing them did).
 */
export const LINGER_AT_ONCE = 16;

let lingering = 0;

/**
 * Writes an answer and ends it: at once when the request's body has all arrived, else as a
 * lingering close (Apache's `lingering_close`, nginx's `lingering_close`). Closing a connection
 * while the client is still uploading makes the kernel answer its next bytes with a reset, which
 * may throw away the answer before the client reads it (a 401 lost to EPIPE/ECONNRESET). So the
 * answer goes out with `Connection: close` and its Content-Length (complete for the client),
 * the rest of the body is read and discarded, and only at its end is the response ended (Node
 * then closes the connection); past LINGER_BYTES or LINGER_MS the connection is destroyed.
 * `headers` is a flat list that must include Content-Length; `Connection: close` is added here.
 */
export function sendAnswer(req: IncomingMessage, res: ServerResponse, status: number, headers: string[], body: string | Buffer): void {
  // (a client already gone has nothing left to read: no lingering, and no 'close' left to count it out)
  if (req.complete || res.destroyed) {
    res.writeHead(status, headers);
    res.end(body);
    return;
  }
  res.writeHead(status, [...headers, 'Connection', 'close']);
  if (lingering >= LINGER_AT_ONCE) {
    res.end(body);
    return;
  }
  // the answer is complete by its length; ending the response now would close under the upload
  res.write(body);
  linger(req, res);
}

function linger(req: IncomingMessage, res: ServerResponse): void {
  lingering += 1;
  let left = LINGER_BYTES;
  const stop = (drained: boolean): void => {
    clearTimeout(timer);
    req.off('data', onData).off('end', onEnd);
    if (drained) res.end();
    else res.destroy();
  };
  const onData = (chunk: Buffer): void => {
    left -= chunk.length;
    if (left < 0) stop(false);
  };
  const onEnd = (): void => stop(true);
  const timer = setTimeout(stop, LINGER_MS, false);
  // once per response, however it ends (drained, cut off, or the client hung up first)
  res.once('close', () => {
    clearTimeout(timer);
    lingering -= 1;
  });
  // a body refused half-read was paused by readBody: flowing again, to nobody but the count
  req.on('data', onData).on('end', onEnd).resume();
}

/** Empty statuses and HEAD answers carry no body for Koa to write (nor for us). */
const EMPTY = new Set([204, 205, 304]);

/** A Koa body as the bytes Koa would write (it serialises anything else as JSON); null for none or a stream. */
function answerText(body: unknown): string | Buffer | null {
  if (body === null || body === undefined || body instanceof Stream) return null;
  return typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
}

/**
 * Koa's door to sendAnswer, mounted outside the error handler: an answer to a request whose body
 * is still arriving (a refusal: too large, not JSON, no route) is written here instead of by Koa,
 * which would end it at once (`ctx.respond = false` is Koa's documented way out). A body Koa
 * streams, or none, is left to Koa with `Connection: close` (the connection closes under the
 * rest, as before).
 */
export function lingeringClose(): Middleware<AppState> {
  return async (ctx, next) => {
    await next();
    if (ctx.req.complete || ctx.respond === false || ctx.res.headersSent) return;
    const text = answerText(ctx.body);
    if (text === null || ctx.method === 'HEAD' || EMPTY.has(ctx.status)) return void ctx.set('Connection', 'close');
    ctx.respond = false;
    sendAnswer(ctx.req, ctx.res, ctx.status, ['Content-Length', String(Buffer.byteLength(text))], text);
  };
}
