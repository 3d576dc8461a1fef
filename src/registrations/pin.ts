import { createHmac, type KeyObject, createSecretKey } from 'node:crypto';

/**
 * PINs never sit in clear in Redis: registrations are keyed by a keyed hash of the PIN,
 * so a copy of the database does not reveal them and can't be brute-forced without the key.
 * The key is PIN_HASH_KEY (JWT_SECRET when unset, as before), independent of token signing.
 * During a rotation the previous key still finds registrations made under it.
 */
export const PIN_PATTERN = /^[\x21-\x7E]{4,128}$/;

const derive = (secret: string): KeyObject => createSecretKey(createHmac('sha256', secret).update('pin-auth/pin-hash/v1').digest());

export class PinHasher {
  private readonly key: KeyObject;
  private readonly previousKey: KeyObject | undefined;

  constructor(secret: string, previousSecret?: string) {
    this.key = derive(secret);
    this.previousKey = previousSecret === undefined || previousSecret === secret ? undefined : derive(previousSecret);
  }

  hash(pin: string): string {
    return createHmac('sha256', this.key).update(pin).digest('base64url').slice(0, 22);
  }

  /**
   * Secrets of one registration attempt, made from the PIN and the client's Idempotency-Key
   * under the current key: `seed` draws its emoji strings (emoji-alphabet.ts), `tag` names a
   * decoy answered to it. Neither can be made without the key, the PIN and the idempotency key.
   */
  attempt(pin: string, idempotencyKey: string): { seed: Buffer; tag: string } {
    const mac = (label: string): Buffer => createHmac('sha256', this.key).update(`${label}\0${pin}\0${idempotencyKey}`).digest();
    return { seed: mac('attempt-seed'), tag: mac('attempt-tag').toString('base64url').slice(0, 22) };
  }

  /** The PIN's hash under the previous key, while a rotation's grace lasts (else null). */
  previousHash(pin: string): string | null {
    return this.previousKey ? createHmac('sha256', this.previousKey).update(pin).digest('base64url').slice(0, 22) : null;
  }
}

/** character classes, as bits of one number */
const DIGIT = 1;
const LOWER = 2;
const UPPER = 4;
const SYMBOL = 8;

/**
 * A rough, generous estimate of a PIN's strength in bits: its length times log2 of the size of
 * the character classes it uses (digits 10, lower 26, upper 26, symbols 32), the length capped
 * at twice its distinct characters (`aaaa1111aaaa` is weaker than its length). It cannot tell a
 * random PIN from a memorable one of the same shape; it stops short and simple ones, which are
 * the ones guessing finds. A random 22-character base64url PIN scores about 131.
 * One pass over a valid PIN's ASCII characters: four regular expressions and a Set of its
 * characters (any other character counts as distinct).
 */
export function pinBits(pin: string): number {
  let classes = 0;
  let distinct = 0;
  const seen = new Uint32Array(4);
  for (let i = 0; i < pin.length; i++) {
    const c = pin.charCodeAt(i);
    classes |= c >= 48 && c <= 57 ? DIGIT : c >= 97 && c <= 122 ? LOWER : c >= 65 && c <= 90 ? UPPER : SYMBOL;
    const word = c >>> 5;
    const bit = 1 << (c & 31);
    if (word > 3) distinct++;
    else if ((seen[word]! & bit) === 0) {
      seen[word]! |= bit;
      distinct++;
    }
  }
  const pool = (classes & DIGIT ? 10 : 0) + (classes & LOWER ? 26 : 0) + (classes & UPPER ? 26 : 0) + (classes & SYMBOL ? 32 : 0);
  if (pool === 0) return 0;
  return Math.min(pin.length, 2 * distinct) * Math.log2(pool);
}
