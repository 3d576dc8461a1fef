import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.js';

/** The body passed the limit (its rest is left unread). */
export class TooLarge extends Error {}

/** `application/json` or any `<type>/<subtype>+json`, parameters allowed (what Koa's `ctx.is` accepts). */
export const JSON_TYPE = /^(?:application\/json|[\w.!#$%&'*^`|~-]+\/[\w.!#$%&'*^`|~-]+\+json)\s*(?:;|$)/i;

/**
 * The exact bytes of the body, up to the limit: TooLarge as soon as the declared or received
 * length passes it (the rest is left unread: the caller drains it or closes the connection).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(new TooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        done();
        req.pause();
        reject(new TooLarge());
      } else chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    // the client went away mid-body: nobody is left to answer, nothing was accepted
    const onClose = (): void => {
      done();
      reject(new AppError('VALIDATION_ERROR', 'Request body incomplete'));
    };
    const done = (): void => {
      req.off('data', onData).off('end', onEnd).off('aborted', onClose).off('error', onClose);
    };
    req.on('data', onData).on('end', onEnd).on('aborted', onClose).on('error', onClose);
  });
}
