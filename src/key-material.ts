import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';

/**
 * Signing keys from text (JWK or PEM) into KeyObjects, once. Beside config.ts, in the lowest
 * layer, because config reads JWT_KEYS with it at start (a bad key stops the process there); the
 * key ring (auth/key-ring.ts) builds what it signs with from the same material. node:crypto only.
 */
export type AsymmetricAlg = 'ES256' | 'EdDSA';
export type SigningAlg = AsymmetricAlg | 'HS256';

export interface KeyMaterial {
  kid: string;
  alg: AsymmetricAlg;
  /** absent for a verify-only key given as a public key */
  privateKey: KeyObject | undefined;
  publicKey: KeyObject;
}

/** The public JWK published in the JWKS. */
export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y?: string;
  kid: string;
  alg: AsymmetricAlg;
  use: 'sig';
}

const KID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

function algOf(key: KeyObject): AsymmetricAlg {
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  throw new Error(`unsupported key type ${key.asymmetricKeyType ?? 'unknown'} (use EC P-256 for ES256 or Ed25519 for EdDSA)`);
}

/** RFC 7638 thumbprint: a stable kid for a key given without one. */
export function thumbprint(jwk: JsonWebKey): string {
  const members = jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

/** One key entry: a JWK (private or public) or `{kid?, pem}`; its algorithm follows from its type. */
export function parseKeyEntry(entry: unknown): KeyMaterial {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new Error('each key must be a JWK or {kid, pem}');
  const e = entry as Record<string, unknown>;
  let privateKey: KeyObject | undefined;
  let publicKey: KeyObject;
  if (typeof e.pem === 'string') {
    const pem = e.pem.replace(/\\n/g, '\n');
    if (/PRIVATE KEY/.test(pem)) {
      privateKey = createPrivateKey(pem);
      publicKey = createPublicKey(privateKey);
    } else {
      publicKey = createPublicKey(pem);
    }
  } else if (typeof e.kty === 'string') {
    const jwk = e as JsonWebKey;
    if (typeof jwk.d === 'string') {
      privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
      publicKey = createPublicKey(privateKey);
    } else {
      publicKey = createPublicKey({ key: jwk, format: 'jwk' });
    }
  } else {
    throw new Error('each key must be a JWK (with kty) or {kid, pem}');
  }
  const alg = algOf(publicKey);
  if (e.alg !== undefined && e.alg !== alg) throw new Error(`key says alg ${String(e.alg)} but is a ${alg} key`);
  const kid = typeof e.kid === 'string' ? e.kid : thumbprint(publicKey.export({ format: 'jwk' }));
  if (!KID_PATTERN.test(kid)) throw new Error(`kid "${kid}" must be 1 to 64 letters, digits, _ . or -`);
  return { kid, alg, privateKey, publicKey };
}

/** JWT_KEYS: a JSON array of entries, or a JWKS document `{keys: [...]}`. */
export function parseKeySet(json: string): KeyMaterial[] {
  const doc: unknown = JSON.parse(json);
  const list = Array.isArray(doc) ? doc : typeof doc === 'object' && doc !== null ? (doc as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(list) || list.length === 0) throw new Error('must be a non-empty JSON array of keys or {"keys": [...]}');
  const keys = list.map(parseKeyEntry);
  const kids = new Set(keys.map((k) => k.kid));
  if (kids.size !== keys.length) throw new Error('two keys share a kid');
  return keys;
}

export function publicJwk(key: KeyMaterial): PublicJwk {
  const { kty, crv, x, y } = key.publicKey.export({ format: 'jwk' });
  return { kty: kty!, crv: crv!, x: x!, ...(y ? { y } : {}), kid: key.kid, alg: key.alg, use: 'sig' };
}

/** A private JWK with its kid and alg (what a generated key is stored as, and what OIDC signs with). */
export function privateJwk(key: KeyMaterial): JsonWebKey & { kid: string; alg: AsymmetricAlg; use: 'sig' } {
  if (!key.privateKey) throw new Error(`key ${key.kid} has no private part`);
  return { ...key.privateKey.export({ format: 'jwk' }), kid: key.kid, alg: key.alg, use: 'sig' };
}

/** A new key pair of the algorithm, with its thumbprint as kid. */
export function generateKeyMaterial(alg: AsymmetricAlg): KeyMaterial {
  const { privateKey, publicKey } = alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
  return { kid: thumbprint(publicKey.export({ format: 'jwk' })), alg, privateKey, publicKey };
}
