import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { encode } from '../src/http/encodings.js';

/**
 * `node dist/scripts/compress-assets.js <dir>…` (the last step of `npm run build`): writes
 * `<file>.br` and `<file>.gz` beside each script, stylesheet and SVG, so the service sends
 * them compressed without compressing anything per request (src/http/encodings.ts).
 */
for (const dir of process.argv.slice(2)) {
  for (const name of readdirSync(dir)) {
    if (!/\.(js|css|svg)$/.test(name)) continue;
    const file = path.join(dir, name);
    const { br, gzip } = encode(readFileSync(file));
    writeFileSync(`${file}.br`, br);
    writeFileSync(`${file}.gz`, gzip);
  }
}
