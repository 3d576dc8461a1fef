import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { AppContext } from './context.js';

/**
 * Compressed forms of the pages' static files, made once (at build for the login page's script
 * and styles, at start for a page's HTML), never per request: no CPU spent on a hot path, and
 * nothing that holds a token or a code is ever compressed (no BREACH-style length oracle).
 */
export interface Encoded {
  identity: Buffer;
  br: Buffer;
  gzip: Buffer;
}

/** Brotli at its best quality and gzip at level 9: worth it for files made once. */
export function encode(body: Buffer | string): Encoded {
  const identity = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  return {
    identity,
    br: brotliCompressSync(identity, {
      params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length },
    }),
    gzip: gzipSync(identity, { level: 9 }),
  };
}

/** Sends the smallest form the request accepts (brotli, then gzip, else as is); caches key on Accept-Encoding. */
export function sendEncoded(ctx: AppContext, body: Encoded): void {
  ctx.vary('Accept-Encoding');
  const form = ctx.acceptsEncodings('br') === 'br' ? 'br' : ctx.acceptsEncodings('gzip') === 'gzip' ? 'gzip' : 'identity';
  if (form !== 'identity') ctx.set('Content-Encoding', form);
  ctx.body = body[form];
}
