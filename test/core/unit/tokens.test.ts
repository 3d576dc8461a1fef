import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { generateKeyMaterial, parseKeySet, privateJwk, type AsymmetricAlg } from '../../../src/key-material.js';
import { KeyRing } from '../../../src/auth/key-ring.js';
import { TokenService } from '../../../src/auth/tokens.js';
import { AppError } from '../../../src/errors.js';

const SECRET = 'unit-secret-0123456789abcdef0123456789';
const SETTINGS = { issuer: 'pin-auth', accessTtl: 900, refreshTtl: 3600 };
const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
const now = (): number => Math.floor(Date.now() / 1000);

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? err.code : 'not an AppError';
  }
  return 'accepted';
};
const header = (token: string): Record<string, unknown> => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;
const payload = (token: string): Record<string, unknown> => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

/** TokenService.verify: key by kid, algorithm pinned to the key, signature, issuer, type, expiry. */
describe('core unit: tokens (HS256 by configuration)', function () {
  const tokens = new TokenService(SETTINGS, KeyRing.hmac(SECRET));
  // issued per test, not when the file loads: a suite that runs longer than the access TTL
  // (900 s) would otherwise meet it expired
  let pair: ReturnType<TokenService['issuePair']>;
  beforeEach(function () {
    pair = tokens.issuePair('user-1', 'sid-1', ['user'], 'jti-1');
  });
  const resign = (token: string, changes: Record<string, unknown>, key = SECRET, algorithm: jwt.Algorithm = 'HS256'): string =>
    jwt.sign({ ...(jwt.decode(token) as object), ...changes }, key, { algorithm, keyid: header(token).kid as string });

  it('issues the documented claims, with a kid', function () {
    const access = tokens.verify(pair.token, 'access');
    expect(access).to.include({ sub: 'user-1', typ: 'access', sid: 'sid-1', iss: 'pin-auth' });
    expect(access.roles).to.deep.equal(['user']);
    expect(access.exp - access.iat).to.equal(900);
    expect(access.jti).to.be.a('string');
    const refresh = tokens.verify(pair.refreshToken, 'refresh');
    expect(refresh).to.include({ sub: 'user-1', typ: 'refresh', sid: 'sid-1', jti: 'jti-1' });
    expect(refresh.exp - refresh.iat).to.equal(3600);
    expect(header(pair.token)).to.deep.equal({ alg: 'HS256', typ: 'JWT', kid: tokens.keys.active.kid });
    expect(tokens.keys.active.kid).to.match(/^hs-/).and.not.include(SECRET.slice(0, 6));
    expect(tokens.keys.jwks().keys).to.deep.equal([]);
  });

  it('refuses the wrong type, key, algorithm, issuer and unsigned tokens', function () {
    expect(codeOf(() => tokens.verify(pair.refreshToken, 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(pair.token, 'refresh'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(resign(pair.token, {}, 'other-secret-0123456789abcdef'), 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(resign(pair.token, {}, SECRET, 'HS384'), 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(resign(pair.token, { iss: 'evil' }), 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(resign(pair.token, { sid: 42 }), 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(resign(pair.token, { nbf: now() + 60 }), 'access'))).to.equal('AUTHENTICATION_FAILED');
    const unsigned = `${b64({ alg: 'none' })}.${pair.token.split('.')[1]}.`;
    expect(codeOf(() => tokens.verify(unsigned, 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify('garbage', 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(`${pair.token}.x`, 'access'))).to.equal('AUTHENTICATION_FAILED');
    // the same signature bytes written with characters outside base64url
    expect(codeOf(() => tokens.verify(`${pair.token}=`, 'access'))).to.equal('AUTHENTICATION_FAILED');
  });

  it('a token without a kid or with an unknown kid is refused under HS256', function () {
    const noKid = jwt.sign(payload(pair.token), SECRET, { algorithm: 'HS256' });
    expect(codeOf(() => tokens.verify(noKid, 'access'))).to.equal('AUTHENTICATION_FAILED');
    const unknown = jwt.sign(payload(pair.token), SECRET, { algorithm: 'HS256', keyid: 'hs-unknown' });
    expect(codeOf(() => tokens.verify(unknown, 'access'))).to.equal('AUTHENTICATION_FAILED');
  });

  it('an expired access token fails unless allowed; an expired refresh token is REFRESH_TOKEN_EXPIRED', function () {
    const lapsed = resign(pair.token, { exp: now() - 10 });
    expect(codeOf(() => tokens.verify(lapsed, 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(lapsed, 'access', { allowExpired: true }))).to.equal('accepted');
    expect(codeOf(() => tokens.verify(resign(pair.refreshToken, { exp: now() - 10 }), 'refresh'))).to.equal('REFRESH_TOKEN_EXPIRED');
  });
});

for (const alg of ['ES256', 'EdDSA'] as AsymmetricAlg[]) {
  describe(`core unit: tokens (${alg})`, function () {
    const current = generateKeyMaterial(alg);
    const previous = generateKeyMaterial(alg);
    const tokens = new TokenService(SETTINGS, KeyRing.fromMaterial([previous, current], current.kid));
    let pair: ReturnType<TokenService['issuePair']>;
    beforeEach(function () {
      pair = tokens.issuePair('user-1', 'sid-1', ['user'], 'jti-1');
    });
    /** Signs like the service would with any key (the test holds the private keys). */
    const signWith = (key: typeof current, claims: Record<string, unknown>, hdr: Record<string, unknown> = {}): string => {
      const input = `${b64({ alg, typ: 'JWT', kid: key.kid, ...hdr })}.${b64(claims)}`;
      const sig = sign(
        alg === 'ES256' ? 'sha256' : null,
        Buffer.from(input),
        alg === 'ES256' ? { key: key.privateKey!, dsaEncoding: 'ieee-p1363' } : key.privateKey!,
      );
      return `${input}.${sig.toString('base64url')}`;
    };

    it('signs with the active key, names it by kid, and verifies with every key of the ring', function () {
      expect(header(pair.token)).to.deep.equal({ alg, typ: 'JWT', kid: current.kid });
      expect(tokens.verify(pair.token, 'access').sub).to.equal('user-1');
      expect(tokens.verify(signWith(previous, payload(pair.token)), 'access').sub).to.equal('user-1');
      expect(tokens.keys.jwks().keys.map((k) => k.kid)).to.deep.equal([current.kid, previous.kid]);
      for (const k of tokens.keys.jwks().keys) expect(k).to.not.have.property('d');
    });

    it("kid confusion: a signature by one key under the other key's kid, an unknown kid, a missing kid → refused", function () {
      const claims = payload(pair.token);
      expect(codeOf(() => tokens.verify(signWith(previous, claims, { kid: current.kid }), 'access'))).to.equal('AUTHENTICATION_FAILED');
      expect(codeOf(() => tokens.verify(signWith(current, claims, { kid: 'no-such-key' }), 'access'))).to.equal('AUTHENTICATION_FAILED');
      expect(codeOf(() => tokens.verify(signWith(current, claims, { kid: undefined }), 'access'))).to.equal('AUTHENTICATION_FAILED');
      expect(codeOf(() => tokens.verify(signWith(current, claims, { kid: 7 }), 'access'))).to.equal('AUTHENTICATION_FAILED');
      expect(codeOf(() => tokens.verify(signWith(current, claims, { crit: ['exp'] }), 'access'))).to.equal('AUTHENTICATION_FAILED');
    });

    it('alg switch: HS256 keyed with the public key (PEM, DER, JWK), another asymmetric alg, none → refused', function () {
      const claims = payload(pair.token);
      const pub = current.publicKey;
      const hsKeys = [pub.export({ type: 'spki', format: 'pem' }), pub.export({ type: 'spki', format: 'der' }), JSON.stringify(pub.export({ format: 'jwk' }))];
      for (const k of hsKeys) {
        const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: current.kid })}.${b64(claims)}`;
        const forged = `${input}.${createHmac('sha256', k).update(input).digest('base64url')}`;
        expect(codeOf(() => tokens.verify(forged, 'access'))).to.equal('AUTHENTICATION_FAILED');
      }
      const other = alg === 'ES256' ? 'EdDSA' : 'ES256';
      expect(codeOf(() => tokens.verify(signWith(current, claims, { alg: other }), 'access'))).to.equal('AUTHENTICATION_FAILED');
      expect(codeOf(() => tokens.verify(`${b64({ alg: 'none', kid: current.kid })}.${b64(claims)}.`, 'access'))).to.equal('AUTHENTICATION_FAILED');
      const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
      expect(codeOf(() => tokens.verify(jwt.sign(claims, rsa, { algorithm: 'RS256', keyid: current.kid }), 'access'))).to.equal('AUTHENTICATION_FAILED');
    });

    it("refresh tokens: HS256 under the active key's derived refresh key, the same on every node; one signed by the key itself is refused", function () {
      expect(header(pair.refreshToken)).to.deep.equal({ alg: 'HS256', typ: 'JWT', kid: current.kid });
      // another process with the same keys (a web node after the worker signed it) verifies it
      const elsewhere = new TokenService(SETTINGS, KeyRing.fromMaterial(parseKeySet(JSON.stringify([privateJwk(previous), privateJwk(current)])), current.kid));
      expect(elsewhere.verify(pair.refreshToken, 'refresh')).to.include({ sub: 'user-1', jti: 'jti-1' });
      // signed by the asymmetric key itself: not a refresh token this service issues
      const byTheKey = signWith(current, payload(pair.refreshToken));
      expect(codeOf(() => tokens.verify(byTheKey, 'refresh'))).to.equal('AUTHENTICATION_FAILED');
      // an HS256 refresh token is never an access token, and HS256 never stands for the key's own algorithm
      expect(codeOf(() => tokens.verify(pair.refreshToken, 'access'))).to.equal('AUTHENTICATION_FAILED');
      const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: current.kid })}.${b64(payload(pair.refreshToken))}`;
      for (const k of [current.publicKey.export({ type: 'spki', format: 'pem' }), SECRET]) {
        const forged = `${input}.${createHmac('sha256', k).update(input).digest('base64url')}`;
        expect(codeOf(() => tokens.verify(forged, 'refresh'))).to.equal('AUTHENTICATION_FAILED');
      }
      // a verify-only key has no refresh key: its HS256 refresh tokens can't be checked
      const publicOnly = parseKeySet(JSON.stringify([privateJwk(previous), { ...current.publicKey.export({ format: 'jwk' }), kid: current.kid }]));
      const verifier = new TokenService(SETTINGS, KeyRing.fromMaterial(publicOnly, previous.kid));
      expect(codeOf(() => verifier.verify(pair.refreshToken, 'refresh'))).to.equal('AUTHENTICATION_FAILED');
      expect(verifier.verify(pair.token, 'access').sub).to.equal('user-1');
    });

    it('a retired key (no longer in the ring) no longer verifies its tokens', function () {
      const after = new TokenService(SETTINGS, KeyRing.fromMaterial([current], current.kid));
      expect(codeOf(() => after.verify(signWith(previous, payload(pair.token)), 'access'))).to.equal('AUTHENTICATION_FAILED');
      expect(codeOf(() => after.verify(pair.token, 'access'))).to.equal('accepted');
    });

    it('keys round-trip through JWT_KEYS text (private JWK, public JWK, PEM)', function () {
      const text = JSON.stringify({
        keys: [
          privateJwk(current),
          { ...previous.publicKey.export({ format: 'jwk' }), kid: previous.kid },
          { kid: 'pem-key', pem: current.privateKey!.export({ type: 'pkcs8', format: 'pem' }) },
        ],
      });
      const parsed = parseKeySet(text);
      expect(parsed.map((k) => [k.kid, k.alg, k.privateKey !== undefined])).to.deep.equal([
        [current.kid, alg, true],
        [previous.kid, alg, false],
        ['pem-key', alg, true],
      ]);
      const ring = KeyRing.fromMaterial(parsed, current.kid);
      expect(new TokenService(SETTINGS, ring).verify(pair.token, 'access').sub).to.equal('user-1');
      expect(ring.signingJwks().map((k) => k.kid)).to.deep.equal([current.kid, 'pem-key']);
    });
  });
}
