import { readFile } from 'node:fs/promises';
import { AppError } from '../errors.js';
import type { AppRouter } from './context.js';

export interface Asset {
  /** a file to read on first request, or the content itself */
  file?: string;
  text?: string;
  type: string;
}

export const JS = 'application/javascript; charset=utf-8';
export const CSS = 'text/css; charset=utf-8';

/**
 * `GET <prefix>/:asset` for a fixed list of files (never a path from the request), each read
 * once and kept in memory; an unknown name is 404 NOT_FOUND.
 */
export function registerAssets(router: AppRouter, prefix: string, assets: Record<string, Asset>): void {
  const cache = new Map<string, Buffer | string>();
  router.get(`${prefix}/:asset`, async (ctx) => {
    const name = ctx.params.asset ?? '';
    const asset = Object.hasOwn(assets, name) ? assets[name] : undefined;
    if (!asset) throw new AppError('NOT_FOUND');
    let body = cache.get(name);
    if (body === undefined) {
      body = asset.text ?? (await readFile(asset.file!));
      cache.set(name, body);
    }
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = body;
  });
}
