import { randomFillSync } from 'node:crypto';

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

/**
 * A user id: 128 random bits as 22 base64url characters. It was a UUID (36 characters); a user's
 * id stands in seven keys and values a session keeps (its key and owner, the user's key and
 * record, the phone index, the session index, the chat message's mark), so the shorter form
 * saves about 100 bytes a signed-in person. Ids already given out stay as they are: ids are opaque.
 */
export const newUserId = (): string => newShortId();
