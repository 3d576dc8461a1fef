import { createHmac, type KeyObject, createSecretKey } from 'node:crypto';

/**
 * PINs never sit in clear in Redis: registrations are keyed by a keyed hash of the PIN,
 * so a copy of the database does not reveal them and can't be brute-forced without the secret.
 */
export const PIN_PATTERN = /^[\x21-\x7E]{4,128}$/;

export class PinHasher {
  private readonly key: KeyObject;

  constructor(secret: string) {
    this.key = createSecretKey(createHmac('sha256', secret).update('pin-auth/pin-hash/v1').digest());
  }

  hash(pin: string): string {
    return createHmac('sha256', this.key).update(pin).digest('base64url').slice(0, 22);
  }
}
