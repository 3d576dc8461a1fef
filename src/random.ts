import { randomFillSync } from 'node:crypto';

/**
 * CSPRNG bytes read ahead in 4 KB blocks, each byte handed out once: a randomFillSync call costs
 * microseconds whatever its size, and a login takes 48 bytes (three ids), a registration 32 (its
 * emoji draw). crypto.randomInt and crypto.randomUUID keep such a cache too.
 */
const block = Buffer.alloc(4096);
let unused = 0;

/** The block's offset of `size` (≤ 4,096) bytes not handed out before, refilling it when too few are left. */
function take(size: number): number {
  if (size > block.length) throw new RangeError(`at most ${block.length} random bytes at once`);
  if (unused < size) {
    randomFillSync(block);
    unused = block.length;
  }
  unused -= size;
  return unused;
}

/** One random byte. */
export const randomByte = (): number => block[take(1)]!;

/** `size` random bytes (at most the block's 4,096) as base64url. */
export function randomBase64url(size: number): string {
  const at = take(size);
  return block.toString('base64url', at, at + size);
}
