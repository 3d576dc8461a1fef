import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.js';
import type { ByteBudget } from '../security/webhook-admission.js';

/** `application/json` or any `<type>/<subtype>+json`, parameters allowed (what Koa's `ctx.is` accepts). */
export const JSON_TYPE = /^(?:application\/json|[\w.!#$%&'*^`|~-]+\/[\w.!#$%&'*^`|~-]+\+json)\s*(?:;|$)/i;

/** What reading a webhook body does besides keeping it (webhook-core.ts). */
export interface BodyOptions {
  /** fed every byte as it arrives (the HMAC that authenticates the body) */
  hash?: { update(chunk: Buffer): unknown };
  /** the bytes kept count against it, as `owner`'s, until the body ends or fails; over it: 429 RATE_LIMITED */
  budget?: ByteBudget;
  owner?: string;
  /**
   * Past `limit`, go on reading (and hashing) up to this many bytes, keeping none, and resolve
   * null at the end; past it, 413 PAYLOAD_TOO_LARGE.
   */
  drainTo: number;
}

/** The body ended before its end, or the connection failed (nobody is left to answer). */
const incomplete = (): AppError => new AppError('VALIDATION_ERROR', 'Request body incomplete');
const busy = (): AppError => new AppError('RATE_LIMITED', 'Too many unauthenticated webhook bodies in flight; retry later', { retryAfter: 1 });

/**
 * The webhook's body reader: the exact bytes, up to `limit` (koa-bodyparser can neither hash a
 * body as it arrives nor count its bytes against a budget). Past `limit` the rest is read and
 * thrown away (null), up to `drainTo`; with `hash` every byte is hashed as it arrives, so a body
 * can be authenticated without keeping more than `limit` of it. A refusal pauses the request:
 * the answer goes out as a lingering close (lingering-close.ts).
 */
export function readBody(req: IncomingMessage, limit: number, options: BodyOptions): Promise<Buffer | null> {
  const { hash, budget, drainTo } = options;
  const owner = options.owner ?? '';
  const declared = Number(req.headers['content-length']);
  if (declared > drainTo) return Promise.reject(new AppError('PAYLOAD_TOO_LARGE'));
  // a declared length past the limit is never kept; one the budget can't hold is refused unread
  let keeping = !(declared > limit);
  if (keeping && budget !== undefined && declared > budget.left(owner)) return Promise.reject(busy());
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let held = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      hash?.update(chunk);
      if (keeping && size > limit) {
        keeping = false;
        chunks = [];
        release();
      }
      if (!keeping) {
        if (size > drainTo) fail(new AppError('PAYLOAD_TOO_LARGE'));
        return;
      }
      if (budget !== undefined) {
        if (!budget.take(owner, chunk.length)) {
          fail(busy());
          return;
        }
        held += chunk.length;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      resolve(!keeping ? null : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    // the client went away mid-body: nobody is left to answer, nothing was accepted
    const onClose = (): void => {
      done();
      reject(incomplete());
    };
    const fail = (err: Error): void => {
      done();
      req.pause();
      reject(err);
    };
    const release = (): void => {
      if (held > 0) budget!.give(owner, held);
      held = 0;
    };
    const done = (): void => {
      release();
      req.off('data', onData).off('end', onEnd).off('aborted', onClose).off('error', onClose);
    };
    req.on('data', onData).on('end', onEnd).on('aborted', onClose).on('error', onClose);
  });
}
