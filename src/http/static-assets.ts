import { readFile } from 'node:fs/promises';
import { AppError } from '../errors.js';
import type { AppContext, AppRouter } from './context.js';
import { encode, sendEncoded, type Encoded } from './encodings.js';

export interface Asset {
  /** a file to read on first request, or the content itself */
  file?: string;
  text?: string;
  type: string;
  /** the build wrote `<file>.br` and `<file>.gz` beside it (scripts/compress-assets.ts) */
  precompressed?: boolean;
}

export const JS = 'application/javascript; charset=utf-8';
export const CSS = 'text/css; charset=utf-8';
export const SVG = 'image/svg+xml';
export const ICO = 'image/x-icon';

/** An asset's bytes, with its compressed forms when it has them (a file of the build, or a small text made here). */
async function load(asset: Asset): Promise<Encoded | Buffer> {
  if (asset.text !== undefined) return encode(asset.text);
  const file = asset.file!;
  if (!asset.precompressed) return readFile(file);
  const [identity, br, gzip] = await Promise.all([readFile(file), readFile(`${file}.br`), readFile(`${file}.gz`)]);
  return { identity, br, gzip };
}

/**
 * `GET <prefix>/:asset` for a fixed list of files (never a path from the request), each read
 * once and kept in memory; an unknown name is 404 NOT_FOUND. `prefix` '' serves `/<name>`.
 */
export function registerAssets(router: AppRouter, prefix: string, assets: Record<string, Asset>): void {
  const cache = new Map<string, Encoded | Buffer>();
  const serve =
    (name: string) =>
    async (ctx: AppContext): Promise<void> => {
      const asset = Object.hasOwn(assets, name) ? assets[name] : undefined;
      if (!asset) throw new AppError('NOT_FOUND');
      let body = cache.get(name);
      if (body === undefined) {
        body = await load(asset);
        cache.set(name, body);
      }
      ctx.type = asset.type;
      ctx.set('Cache-Control', 'public, max-age=3600');
      if (Buffer.isBuffer(body)) ctx.body = body;
      else sendEncoded(ctx, body);
    };
  if (prefix === '') for (const name of Object.keys(assets)) router.get(`/${name}`, serve(name));
  else router.get(`${prefix}/:asset`, (ctx) => serve(ctx.params.asset ?? '')(ctx));
}
