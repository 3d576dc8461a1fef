import { generateKeyPairSync } from 'node:crypto';
import { expect } from 'chai';
import { fullLogin, type LoginBody } from '../helpers/flow.js';
import { get, post, request, type JsonResponse } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { keys } from '../../src/redis/keys.js';
import { expectError } from './expect-error.js';
import { decodeJwt, forgeJwt, tamperJwt } from './jwt-forge.js';

const SECRET = 'security-suite-secret-0123456789abcdef';
const ISSUER = 'pin-auth';
const now = (): number => Math.floor(Date.now() / 1000);

describe('security: token and session attacks answer 401 (HS256 by configuration)', function () {
  let stack: Stack;
  let victim: LoginBody;
  let claims: Record<string, unknown>;
  let kid: unknown;
  const secrets: string[] = [];

  const profile = (token: string): Promise<JsonResponse> => get(stack.url, '/profile', token);
  const refresh = (access: string, refreshToken: string): Promise<JsonResponse> => post(stack.url, '/refresh-token', { refreshToken }, access);
  const login = async (): Promise<LoginBody> => {
    const { pin, emoji, login: body } = await fullLogin(stack.url);
    secrets.push(pin, emoji, body.token, body.refreshToken);
    return body;
  };
  /** A token with the victim's real claims, made by the attacker's signer. */
  const withClaims = (changes: Record<string, unknown>, signer: Parameters<typeof forgeJwt>[1]) => forgeJwt({ ...claims, ...changes }, signer, { kid });

  before(async function () {
    stack = await startStack({ name: 'sec-tokens', env: { JWT_ALGORITHM: 'HS256', JWT_SECRET: SECRET, JWT_ISSUER: ISSUER } });
    victim = await login();
    claims = decodeJwt(victim.token);
    kid = JSON.parse(Buffer.from(victim.token.split('.')[0]!, 'base64url').toString()).kid;
    // the control: the genuine token works, so each 401 below is the attack's doing
    expect((await profile(victim.token)).status).to.equal(200);
    expect(withClaims({}, { alg: 'HS256', key: SECRET })).to.equal(victim.token);
  });
  after(async function () {
    await stack?.stop();
  });

  const attacks: Array<[string, () => string]> = [
    ['alg none', () => withClaims({}, { alg: 'none' })],
    ['alg none with the genuine signature kept', () => forgeJwt(claims, { alg: 'none' }).replace(/\.$/, `.${victim.token.split('.')[2]}`)],
    ['a wrong key', () => withClaims({}, { alg: 'HS256', key: 'another-secret-of-sufficient-length-000' })],
    ['RS256 signed with a generated RSA key', () => withClaims({}, { alg: 'RS256', privateKey: rsa().privateKey })],
    ['HS256 keyed with the RSA public key PEM (HS/RS confusion)', () => withClaims({}, { alg: 'HS256', key: rsa().publicPem })],
    ['a wrong issuer', () => withClaims({ iss: 'someone-else' }, { alg: 'HS256', key: SECRET })],
    ['no issuer', () => withClaims({ iss: undefined }, { alg: 'HS256', key: SECRET })],
    ['an expired access token', () => withClaims({ iat: now() - 3600, exp: now() - 60 }, { alg: 'HS256', key: SECRET })],
    ['a tampered payload (roles)', () => tamperJwt(victim.token, { roles: ['admin'] })],
    ['a tampered payload (sub)', () => tamperJwt(victim.token, { sub: 'someone-else' })],
    ['a refresh token used as an access token', () => victim.refreshToken],
    ['a signed token without a session id', () => withClaims({ sid: undefined }, { alg: 'HS256', key: SECRET })],
    ['a signed token of a session that never existed', () => withClaims({ sid: 'no-such-session' }, { alg: 'HS256', key: SECRET })],
    ['garbage', () => 'not.a.jwt'],
    ['an unknown kid', () => forgeJwt(claims, { alg: 'HS256', key: SECRET }, { kid: 'hs-unknown' })],
  ];
  for (const [name, make] of attacks) {
    it(`${name} → 401 AUTHENTICATION_FAILED`, async function () {
      expectError(await profile(make()), 'AUTHENTICATION_FAILED');
    });
  }

  it('a missing or non-Bearer Authorization header → 401', async function () {
    expectError(await get(stack.url, '/profile'), 'AUTHENTICATION_FAILED');
    expectError(await request(stack.url, 'GET', '/profile', { headers: { authorization: `Basic ${victim.token}` } }), 'AUTHENTICATION_FAILED');
  });

  it('/refresh-token: an access token as the refresh token, or a refresh token as the bearer → 401', async function () {
    expectError(await refresh(victim.token, victim.token), 'AUTHENTICATION_FAILED');
    expectError(await refresh(victim.refreshToken, victim.refreshToken), 'AUTHENTICATION_FAILED');
    const forgedRefresh = forgeJwt({ ...decodeJwt(victim.refreshToken) }, { alg: 'HS256', key: 'another-secret-of-sufficient-length-000' });
    expectError(await refresh(victim.token, forgedRefresh), 'AUTHENTICATION_FAILED');
  });

  it('/refresh-token: an expired refresh token → 401 REFRESH_TOKEN_EXPIRED', async function () {
    const expired = forgeJwt({ ...decodeJwt(victim.refreshToken), exp: now() - 60 }, { alg: 'HS256', key: SECRET }, { kid });
    expectError(await refresh(victim.token, expired), 'REFRESH_TOKEN_EXPIRED');
  });

  it("/refresh-token: another user's refresh token with my access token → 401", async function () {
    const other = await login();
    expectError(await refresh(victim.token, other.refreshToken), 'AUTHENTICATION_FAILED');
    expect((await profile(other.token)).status).to.equal(200);
  });

  it('after logout the access and refresh tokens of the session → 401', async function () {
    const user = await login();
    const out = await post(stack.url, '/logout', { userId: user.user.id }, user.token);
    expect(out.status, out.text).to.equal(200);
    expectError(await profile(user.token), 'AUTHENTICATION_FAILED');
    expectError(await refresh(user.token, user.refreshToken), 'AUTHENTICATION_FAILED');
    expectError(await post(stack.url, '/refresh-token', { id: user.user.id }, user.token), 'AUTHENTICATION_FAILED');
  });

  it('a spent refresh token presented after the retry leeway closes the session: every token of it → 401', async function () {
    const user = await login();
    const rotated = await refresh(user.token, user.refreshToken);
    expect(rotated.status, rotated.text).to.equal(200);
    const next = rotated.body as unknown as LoginBody;
    // within the leeway the same token is a retry: the same pair again, nothing closed
    const retried = await refresh(user.token, user.refreshToken);
    expect(retried.status, retried.text).to.equal(200);
    expect(retried.body).to.deep.equal(rotated.body);
    // one rotation later the first token is no retry of the last rotation: reuse
    const later = await refresh(next.token, next.refreshToken);
    expect(later.status, later.text).to.equal(200);
    const last = later.body as unknown as LoginBody;
    secrets.push(next.token, next.refreshToken, last.token, last.refreshToken);
    expectError(await refresh(user.token, user.refreshToken), 'AUTHENTICATION_FAILED');
    expectError(await profile(last.token), 'AUTHENTICATION_FAILED');
    expectError(await refresh(last.token, last.refreshToken), 'AUTHENTICATION_FAILED');
  });

  it('the same refresh token presented 24 times at once: exactly one rotation, every caller gets its pair', async function () {
    const user = await login();
    const answers = await Promise.all(Array.from({ length: 24 }, () => refresh(user.token, user.refreshToken)));
    expect(answers.map((a) => a.status).join(',')).to.equal(Array(24).fill(200).join(','));
    const pairs = new Set(answers.map((a) => a.text));
    expect(pairs.size, 'distinct pairs').to.equal(1);
    const winner = answers[0]!.body as unknown as LoginBody;
    secrets.push(winner.token, winner.refreshToken);
    expect((await profile(winner.token)).status).to.equal(200);
    // the pair's own refresh token rotates once more; the first token is then reuse
    const next = await refresh(winner.token, winner.refreshToken);
    expect(next.status, next.text).to.equal(200);
    expectError(await refresh(user.token, user.refreshToken), 'AUTHENTICATION_FAILED');
    expectError(await profile(String(next.body.token)), 'AUTHENTICATION_FAILED');
    expectError(await profile(user.token), 'AUTHENTICATION_FAILED');
  });

  it("a refresh signs the user's roles as stored when it rotates; a user gone → 401", async function () {
    const redis = testRedis();
    try {
      const user = await login();
      expect(decodeJwt(user.token).roles).to.deep.equal(['user']);
      // roles changed since the access token was signed: the new pair carries the stored ones
      await redis.hset(keys(stack.prefix).user(user.user.id), 'roles', '["user","admin"]');
      const rotated = await refresh(user.token, user.refreshToken);
      expect(rotated.status, rotated.text).to.equal(200);
      const next = rotated.body as unknown as LoginBody;
      secrets.push(next.token, next.refreshToken);
      expect(decodeJwt(next.token).roles).to.deep.equal(['user', 'admin']);
      expect((await profile(next.token)).body.user).to.deep.include({ roles: ['user', 'admin'] });
      // stored roles written another way (spacing) are still what the token says
      await redis.hset(keys(stack.prefix).user(user.user.id), 'roles', '[ "user" ]');
      const again = await post(stack.url, '/refresh-token', { id: user.user.id }, next.token);
      expect(again.status, again.text).to.equal(200);
      expect(decodeJwt(String(again.body.token)).roles).to.deep.equal(['user']);
      // the profile is the stored record, field by field
      const stored = await redis.hgetall(keys(stack.prefix).user(user.user.id));
      const shown = await profile(String(again.body.token));
      expect(shown.body.user).to.deep.equal({ id: stored.id, name: stored.name, surname: stored.surname ?? '', phone: stored.phone, roles: ['user'] });
      // the user's record removed: its sessions can't be refreshed, nor its profile read
      await redis.del(keys(stack.prefix).user(user.user.id));
      expectError(await profile(String(again.body.token)), 'AUTHENTICATION_FAILED');
      expectError(await refresh(String(again.body.token), String(again.body.refreshToken)), 'AUTHENTICATION_FAILED');
    } finally {
      redis.disconnect();
    }
  });

  it('logs never contain a PIN, an emoji string or a token', async function () {
    const output = [...stack.webs, ...stack.workers].map((p) => p.output()).join('\n');
    expect(output).to.match(/login/);
    for (const s of secrets) expect(output.includes(s), `log contains a secret of length ${s.length}`).to.equal(false);
  });
});

let rsaPair: { privateKey: ReturnType<typeof generateKeyPairSync>['privateKey']; publicPem: string } | undefined;
function rsa(): NonNullable<typeof rsaPair> {
  if (!rsaPair) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    rsaPair = { privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
  }
  return rsaPair;
}
