import { createHash, createHmac, createSecretKey, hkdfSync, sign, timingSafeEqual, verify, type KeyObject } from 'node:crypto';
import type { RedisClient } from '../redis/connection.js';
import type { Config } from '../config.js';
import type { Keys } from '../redis/keys.js';
import {
  generateKeyMaterial,
  parseKeyEntry,
  privateJwk,
  publicJwk,
  type AsymmetricAlg,
  type KeyMaterial,
  type PublicJwk,
  type SigningAlg,
} from '../key-material.js';

/**
 * The keys tokens are signed and verified with, each prepared once: its KeyObject, its JOSE
 * header, and a sign/verify pair bound to its one algorithm. A token names its key by `kid`
 * and must carry that key's algorithm, so no header can steer a key into another algorithm.
 */
export interface RingKey {
  kid: string;
  alg: SigningAlg;
  /** base64url of `{"alg","typ","kid"}`: the first segment of every token this key signs */
  header: string;
  sign(signingInput: string): string;
  verify(signingInput: string, signature: Buffer): boolean;
  /**
   * Refresh tokens: HS256 under a key derived from this key's private part (the key itself
   * under HS256). Only this service ever reads a refresh token, so it needs no public
   * signature, and a MAC costs a small fraction of an ES256 signature check: a refresh verifies
   * one and a login signs one. Absent for a verify-only key: its refresh tokens can't
   * be checked, and their sessions sign in again.
   */
  refresh: MacKey | undefined;
}

/** An HS256 key: JOSE header, MAC and its constant-time check. */
export interface MacKey {
  header: string;
  sign(signingInput: string): string;
  verify(signingInput: string, signature: Buffer): boolean;
}

const b64Header = (alg: SigningAlg, kid: string): string => Buffer.from(JSON.stringify({ alg, typ: 'JWT', kid })).toString('base64url');

/** ES256 signatures are the raw r‖s pair (64 bytes) in JOSE, not DER. */
const ecdsa = { dsaEncoding: 'ieee-p1363' } as const;

function macKey(key: KeyObject, kid: string): MacKey {
  const mac = (input: string): Buffer => createHmac('sha256', key).update(input).digest();
  return {
    header: b64Header('HS256', kid),
    sign: (input) => mac(input).toString('base64url'),
    verify: (input, signature) => signature.length === 32 && timingSafeEqual(mac(input), signature),
  };
}

/** The refresh-token MAC key of a private key: HKDF of its PKCS#8 bytes, so every node derives the same one. */
function refreshKeyOf(privateKey: KeyObject, kid: string): MacKey {
  const ikm = privateKey.export({ format: 'der', type: 'pkcs8' });
  return macKey(createSecretKey(Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), 'pin-auth/refresh-token/v1', 32))), kid);
}

function asymmetricKey(m: KeyMaterial): RingKey {
  const digest = m.alg === 'ES256' ? 'sha256' : null;
  const sigLength = 64; // both P-256 (r‖s) and Ed25519 signatures
  const signKey = m.privateKey === undefined ? undefined : m.alg === 'ES256' ? { key: m.privateKey, ...ecdsa } : m.privateKey;
  const verifyKey = m.alg === 'ES256' ? { key: m.publicKey, ...ecdsa } : m.publicKey;
  return {
    kid: m.kid,
    alg: m.alg,
    header: b64Header(m.alg, m.kid),
    sign(input) {
      if (signKey === undefined) throw new Error(`key ${m.kid} is verify-only`);
      return sign(digest, Buffer.from(input), signKey).toString('base64url');
    },
    verify: (input, signature) => signature.length === sigLength && verify(digest, Buffer.from(input), verifyKey, signature),
    refresh: m.privateKey === undefined ? undefined : refreshKeyOf(m.privateKey, m.kid),
  };
}

function hmacKey(secret: string): RingKey {
  // a name for the secret that reveals nothing about it
  const kid = `hs-${createHash('sha256').update(`pin-auth/kid/${secret}`).digest('base64url').slice(0, 12)}`;
  const mac = macKey(createSecretKey(Buffer.from(secret, 'utf8')), kid);
  return { kid, alg: 'HS256', ...mac, refresh: mac };
}

export class KeyRing {
  private readonly byKid: Map<string, RingKey>;

  private constructor(
    readonly active: RingKey,
    keys: RingKey[],
    private readonly material: KeyMaterial[],
  ) {
    this.byKid = new Map(keys.map((k) => [k.kid, k]));
  }

  /** Asymmetric keys: the active one signs, every one verifies and is published. */
  static fromMaterial(material: KeyMaterial[], activeKid: string): KeyRing {
    const keys = material.map(asymmetricKey);
    const active = keys.find((k) => k.kid === activeKid);
    if (!active) throw new Error(`no key with kid ${activeKid}`);
    // the active key first: JWKS readers and the OIDC provider take the first match
    const ordered = [...material].sort((a, b) => Number(b.kid === activeKid) - Number(a.kid === activeKid));
    return new KeyRing(active, keys, ordered);
  }

  static hmac(secret: string): KeyRing {
    const key = hmacKey(secret);
    return new KeyRing(key, [key], []);
  }

  /** The key a token's `kid` names (every token we sign carries one). */
  find(kid: unknown): RingKey | undefined {
    return typeof kid === 'string' ? this.byKid.get(kid) : undefined;
  }

  /** `GET /.well-known/jwks.json`: every public key, the active one first (empty under HS256). */
  jwks(): { keys: PublicJwk[] } {
    return { keys: this.material.map(publicJwk) };
  }

  /** Private JWKs that can sign (active first), for the OpenID provider's ID tokens. */
  signingJwks(): ReturnType<typeof privateJwk>[] {
    return this.material.filter((m) => m.privateKey !== undefined).map(privateJwk);
  }
}

/**
 * The ring a process uses. With configured keys or HS256 it is built from the config alone;
 * otherwise one key of the algorithm is generated at the first start and kept in Redis, created
 * with SET NX so every node (and every later start) reads the same one.
 */
export async function loadKeyRing(config: Config, redis: RedisClient, keys: Keys): Promise<KeyRing> {
  if (config.jwtAlgorithm === 'HS256') return KeyRing.hmac(config.jwtSecret);
  if (config.jwtKeys.length > 0) return KeyRing.fromMaterial(config.jwtKeys, config.jwtActiveKid!);
  const alg = config.jwtAlgorithm as AsymmetricAlg;
  const slot = keys.generatedSigningKey(alg);
  await redis.set(slot, JSON.stringify(privateJwk(generateKeyMaterial(alg))), 'NX');
  const stored = await redis.get(slot);
  if (stored === null) throw new Error('the generated signing key vanished from Redis');
  const material = parseKeyEntry(JSON.parse(stored));
  return KeyRing.fromMaterial([material], material.kid);
}
