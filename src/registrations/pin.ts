import { createHmac, type KeyObject, createSecretKey } from 'node:crypto';

/**
 * PINs never sit in clear in Redis: registrations are keyed by a keyed hash of the PIN,
 * so a copy of the database does not reveal them and can't be brute-forced without the key.
 * The key is PIN_HASH_KEY (JWT_SECRET when unset, as before), independent of token signing.
 * During a rotation the previous key still finds registrations made under it.
 */
export const PIN_PATTERN = /^[\x21-\x7E]{4,128}$/;

const derive = (secret: string): KeyObject =>
  createSecretKey(createHmac('sha256', secret).update('pin-auth/pin-hash/v1').digest());

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

  /** The PIN's hash under the previous key, while a rotation's grace lasts (else null). */
  previousHash(pin: string): string | null {
    return this.previousKey ? createHmac('sha256', this.previousKey).update(pin).digest('base64url').slice(0, 22) : null;
  }
}

/**
 * A rough, generous estimate of a PIN's strength in bits: its length times log2 of the size of
 * the character classes it uses (digits 10, lower 26, upper 26, symbols 32), the length capped
 * at twice its distinct characters (`aaaa1111aaaa` is weaker than its length). It cannot tell a
 * random PIN from a memorable one of the same shape; it stops short and simple ones, which are
 * the ones guessing finds. A random 22-character base64url PIN scores about 131.
 */
export function pinBits(pin: string): number {
  let pool = 0;
  if (/[0-9]/.test(pin)) pool += 10;
  if (/[a-z]/.test(pin)) pool += 26;
  if (/[A-Z]/.test(pin)) pool += 26;
  if (/[^0-9a-zA-Z]/.test(pin)) pool += 32;
  if (pool === 0) return 0;
  const length = Math.min(pin.length, 2 * new Set(pin).size);
  return length * Math.log2(pool);
}
