import { randomFillSync, randomUUID } from 'node:crypto';

/**
 * Random identifiers: opaque, URL-safe, unguessable. Short ids are cut from a pooled buffer of
 * CSPRNG bytes: a login needs three, and one system call per id was a measurable cost.
 */
const ID_BYTES = 16;
const pool = Buffer.alloc(ID_BYTES * 256);
let offset = pool.length;

export function newShortId(): string {
  if (offset + ID_BYTES > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}

export const newUserId = (): string => randomUUID();
