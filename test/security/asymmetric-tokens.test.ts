import { createHmac, sign } from 'node:crypto';
import { expect } from 'chai';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { generateKeyMaterial, privateJwk, type KeyMaterial } from '../../src/key-material.js';
import { fullLogin, type LoginBody } from '../helpers/flow.js';
import { get, post } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { expectError } from './expect-error.js';
import { decodeJwt } from './jwt-forge.js';

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
const headerOf = (token: string): Record<string, unknown> => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as Record<string, unknown>;
const es256 = (key: KeyMaterial, claims: Record<string, unknown>, header: Record<string, unknown> = {}): string => {
  const input = `${b64({ alg: 'ES256', typ: 'JWT', kid: key.kid, ...header })}.${b64(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key: key.privateKey!, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
};
const keysEnv = (keys: KeyMaterial[], active: KeyMaterial, publicOnly: KeyMaterial[] = []): Record<string, string> => ({
  JWT_KEYS: JSON.stringify([...keys.map(privateJwk), ...publicOnly.map((k) => ({ ...k.publicKey.export({ format: 'jwk' }), kid: k.kid }))]),
  JWT_ACTIVE_KID: active.kid,
});

/**
 * ES256 keys from JWT_KEYS: kid confusion, an alg switch to HS256 keyed with the public key, an
 * unknown kid; a resource server that holds only the JWKS; a rotation that logs nobody out; a
 * retired key's tokens refused.
 */
describe('security: asymmetric tokens, JWKS and key rotation', function () {
  const keyA = generateKeyMaterial('ES256');
  const keyB = generateKeyMaterial('ES256');
  let stack: InProcessStack;
  let victim: LoginBody;
  let claims: Record<string, unknown>;
  const profile = (token: string) => get(stack.url, '/profile', token);
  /** Replaces the web node with one started with other keys (same Redis, same sessions). */
  const restartWeb = async (env: Record<string, string>): Promise<void> => {
    const old = stack.webs.shift()!;
    await stack.addWeb(env);
    await old.stop();
  };

  before(async function () {
    stack = await startStack({ inProcess: true, name: 'sec-es256', env: keysEnv([keyA], keyA) });
    victim = (await fullLogin(stack.url)).login;
    claims = decodeJwt(victim.token);
    expect(headerOf(victim.token)).to.deep.equal({ alg: 'ES256', typ: 'JWT', kid: keyA.kid });
    expect((await profile(victim.token)).status).to.equal(200);
    // control: the test's own signature with the real key is accepted, so each 401 below is the attack's doing
    expect((await profile(es256(keyA, claims))).status).to.equal(200);
  });
  after(async function () {
    await stack?.stop();
  });

  const attacks: Array<[string, () => string]> = [
    ['kid confusion: signed by a foreign key under the real kid', () => es256(keyB, claims, { kid: keyA.kid })],
    ['an unknown kid', () => es256(keyA, claims, { kid: 'no-such-key' })],
    ['no kid', () => es256(keyA, claims, { kid: undefined })],
    ['alg switched to HS256, keyed with the public key PEM', () => hsWith(keyA.publicKey.export({ type: 'spki', format: 'pem' }))],
    ['alg switched to HS256, keyed with the public JWK', () => hsWith(JSON.stringify(keyA.publicKey.export({ format: 'jwk' })))],
    ['alg none under the real kid', () => `${b64({ alg: 'none', kid: keyA.kid })}.${b64(claims)}.`],
    ['ES256 header, EdDSA claimed', () => es256(keyA, claims, { alg: 'EdDSA' })],
  ];
  function hsWith(key: string | Buffer): string {
    const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: keyA.kid })}.${b64(claims)}`;
    return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
  }
  for (const [name, make] of attacks) {
    it(`${name} → 401 AUTHENTICATION_FAILED`, async function () {
      expectError(await profile(make()), 'AUTHENTICATION_FAILED');
    });
  }

  it('GET /.well-known/jwks.json: public keys only, with cache headers', async function () {
    const res = await get(stack.url, '/.well-known/jwks.json');
    expect(res.status).to.equal(200);
    expect(res.headers.get('cache-control')).to.match(/max-age=\d+/);
    const keys = res.body.keys as Array<Record<string, unknown>>;
    expect(keys.map((k) => [k.kid, k.alg, k.kty, k.crv, k.use])).to.deep.equal([[keyA.kid, 'ES256', 'EC', 'P-256', 'sig']]);
    expect(keys[0]).to.not.have.property('d');
  });

  it('a resource server verifies an access token with only the JWKS (no secret)', async function () {
    const jwks = createLocalJWKSet((await get(stack.url, '/.well-known/jwks.json')).body as never);
    const { payload, protectedHeader } = await jwtVerify(victim.token, jwks, { issuer: 'pin-auth', algorithms: ['ES256'] });
    expect(payload.sub).to.equal(victim.user.id);
    expect(protectedHeader.kid).to.equal(keyA.kid);
    let refused = false;
    await jwtVerify(es256(keyB, claims, { kid: keyA.kid }), jwks).catch(() => (refused = true));
    expect(refused).to.equal(true);
  });

  it('rotation: add B (verify-only), activate B, retire A; nobody is logged out until A is retired', async function () {
    // 1. add: B is published before it signs (caches pick it up); A still signs
    await restartWeb(keysEnv([keyA, keyB], keyA));
    let jwks = (await get(stack.url, '/.well-known/jwks.json')).body.keys as Array<{ kid: string }>;
    expect(jwks.map((k) => k.kid)).to.deep.equal([keyA.kid, keyB.kid]);
    // 2. activate B everywhere (web and worker); A verifies what it signed
    await restartWeb(keysEnv([keyA, keyB], keyB));
    const oldWorker = stack.workers.shift()!;
    await stack.addWorker(keysEnv([keyA, keyB], keyB));
    await oldWorker.stop();
    expect((await profile(victim.token)).status, 'a token signed before the rotation').to.equal(200);
    const fresh = (await fullLogin(stack.url)).login;
    expect(headerOf(fresh.token).kid).to.equal(keyB.kid);
    const rotated = await post(stack.url, '/refresh-token', { refreshToken: victim.refreshToken }, victim.token);
    expect(rotated.status, rotated.text).to.equal(200);
    const renewed = rotated.body as unknown as LoginBody;
    expect(headerOf(renewed.token).kid).to.equal(keyB.kid);
    jwks = (await get(stack.url, '/.well-known/jwks.json')).body.keys as Array<{ kid: string }>;
    expect(jwks.map((k) => k.kid)).to.deep.equal([keyB.kid, keyA.kid]);
    // 3. retire A: its tokens are refused, B's work
    await restartWeb(keysEnv([keyB], keyB));
    expectError(await profile(es256(keyA, { ...decodeJwt(renewed.token) })), 'AUTHENTICATION_FAILED');
    expect((await profile(renewed.token)).status).to.equal(200);
    expect((await profile(fresh.token)).status).to.equal(200);
    jwks = (await get(stack.url, '/.well-known/jwks.json')).body.keys as Array<{ kid: string }>;
    expect(jwks.map((k) => k.kid)).to.deep.equal([keyB.kid]);
  });
});

describe('security: a key generated at first start is shared through Redis', function () {
  let stack: InProcessStack;
  after(async function () {
    await stack?.stop();
  });

  it('two web nodes and a worker started together agree on one key; tokens verify on either node', async function () {
    stack = await startStack({ inProcess: true, name: 'sec-genkey', webs: 2, workers: 1, env: { JWT_ALGORITHM: 'EdDSA' } });
    const [a, b] = await Promise.all(stack.webs.map((w) => get(w.url, '/.well-known/jwks.json')));
    const keys = a!.body.keys as Array<{ kid: string; alg: string; crv: string }>;
    expect(keys).to.have.length(1);
    expect(keys[0]).to.include({ alg: 'EdDSA', crv: 'Ed25519' });
    expect(b!.body).to.deep.equal(a!.body);
    const { login } = await fullLogin(stack.webs[0]!.url);
    expect(headerOf(login.token)).to.include({ alg: 'EdDSA', kid: keys[0]!.kid });
    expect((await get(stack.webs[1]!.url, '/profile', login.token)).status).to.equal(200);
  });
});
