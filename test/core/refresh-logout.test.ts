import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { fullLogin, randomPhone, type LoginBody } from '../helpers/flow.js';
import { get, post, request } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { keys } from '../../src/redis/keys.js';
import { expectError, sleep, TEST_JWT_SECRET } from './support.js';

/** the refresh retry leeway of this suite (short: the reuse case waits it out) */
const REUSE_SECONDS = 1;

/**
 * Tokens and sessions: protected endpoints, rotation with reuse detection, both body forms, logout.
 * HS256 by configuration, so the test can forge tokens with the secret (the default ES256 keys
 * are tested in test/security/tokens.test.ts and test/auth/).
 */
describe('core: tokens, refresh and logout', function () {
  let stack: InProcessStack;
  before(async function () {
    stack = await startStack({
      inProcess: true,
      name: 'core-tok',
      webs: 1,
      workers: 1,
      env: { JWT_ALGORITHM: 'HS256', JWT_SECRET: TEST_JWT_SECRET, CHAT_REPLIES: 'false', REFRESH_REUSE_SECONDS: String(REUSE_SECONDS) },
    });
  });
  after(async function () {
    await stack?.stop();
  });

  const login = async (): Promise<LoginBody> => (await fullLogin(stack.url)).login;
  const profileStatus = async (token: string): Promise<number> => (await get(stack.url, '/profile', token)).status;
  /** A token as the service would sign it, with changes (expired, other type, other key). */
  const forge = (base: string, changes: Record<string, unknown>, key = TEST_JWT_SECRET, alg: jwt.Algorithm = 'HS256'): string => {
    const claims = { ...(jwt.decode(base) as Record<string, unknown>), ...changes };
    // the service's own key id: a token without one is refused before its signature is checked
    const kid = (jwt.decode(base, { complete: true })?.header.kid as string | undefined) ?? '';
    return jwt.sign(claims, key, { algorithm: alg, keyid: kid });
  };
  const now = (): number => Math.floor(Date.now() / 1000);

  it('protected endpoints need a valid access token of an open session', async function () {
    const l = await login();
    expect(await profileStatus(l.token)).to.equal(200);
    expectError(await get(stack.url, '/profile'), 401, 'AUTHENTICATION_FAILED');
    expectError(await get(stack.url, '/profile', 'not.a.jwt'), 401, 'AUTHENTICATION_FAILED');
    expectError(await request(stack.url, 'GET', '/profile', { headers: { authorization: `Basic ${l.token}` } }), 401, 'AUTHENTICATION_FAILED');
    expectError(await get(stack.url, '/profile', l.refreshToken), 401, 'AUTHENTICATION_FAILED');
    expectError(await get(stack.url, '/profile', forge(l.token, {}, 'another-secret-another-secret-another-secret')), 401, 'AUTHENTICATION_FAILED');
    expectError(await get(stack.url, '/profile', forge(l.token, {}, TEST_JWT_SECRET, 'HS512')), 401, 'AUTHENTICATION_FAILED');
    expectError(await get(stack.url, '/profile', forge(l.token, { exp: now() - 5 })), 401, 'AUTHENTICATION_FAILED');
    expectError(await get(stack.url, '/profile', forge(l.token, { iss: 'someone-else' })), 401, 'AUTHENTICATION_FAILED');
    const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${l.token.split('.')[1]}.`;
    expectError(await get(stack.url, '/profile', unsigned), 401, 'AUTHENTICATION_FAILED');
  });

  it('{refreshToken} rotates; presenting the spent one again after the retry leeway closes the session', async function () {
    const l = await login();
    const r1 = await post(stack.url, '/refresh-token', { refreshToken: l.refreshToken }, l.token);
    expect(r1.status, r1.text).to.equal(200);
    expect(r1.body).to.have.all.keys('success', 'token', 'refreshToken');
    expect(r1.body.success).to.equal(true);
    const pair = r1.body as { token: string; refreshToken: string };
    expect(pair.refreshToken).to.not.equal(l.refreshToken);
    expect(await profileStatus(pair.token)).to.equal(200);

    // within the leeway a retry gets the same pair; after it, reuse is refused and closes the session
    const retry = await post(stack.url, '/refresh-token', { refreshToken: l.refreshToken }, l.token);
    expect(retry.body).to.deep.equal(r1.body);
    await sleep(REUSE_SECONDS * 1000 + 300);
    expectError(await post(stack.url, '/refresh-token', { refreshToken: l.refreshToken }, pair.token), 401, 'AUTHENTICATION_FAILED');
    expect(await profileStatus(pair.token)).to.equal(401);
    expect(await profileStatus(l.token)).to.equal(401);
    expectError(await post(stack.url, '/refresh-token', { refreshToken: pair.refreshToken }, pair.token), 401, 'AUTHENTICATION_FAILED');
  });

  it('a retry whose kept pair is not a pair is answered as a closed session, never with half an answer', async function () {
    const l = await login();
    const r1 = await post(stack.url, '/refresh-token', { refreshToken: l.refreshToken }, l.token);
    expect(r1.status, r1.text).to.equal(200);
    // the rotation's record as no code writes it: the presented jti without a JSON pair
    const { sub, sid } = jwt.decode(l.token) as { sub: string; sid: string };
    const redis = testRedis();
    try {
      const record = keys(stack.prefix).rotation(sub, sid);
      expect(await redis.hget(record, 'pairJson'), 'the pair kept for a retry').to.equal(
        JSON.stringify({ token: r1.body.token, refreshToken: r1.body.refreshToken }),
      );
      await redis.hset(record, 'pairJson', 'not a pair');
      const retry = await post(stack.url, '/refresh-token', { refreshToken: l.refreshToken }, l.token);
      expectError(retry, 401, 'AUTHENTICATION_FAILED');
    } finally {
      redis.disconnect();
    }
  });

  it("{refreshToken} accepts a lapsed access token of the same user, not another user's", async function () {
    const l = await login();
    const other = await login();
    const lapsed = forge(l.token, { iat: now() - 3600, exp: now() - 60 });
    expectError(await post(stack.url, '/refresh-token', { refreshToken: l.refreshToken }, other.token), 401, 'AUTHENTICATION_FAILED');
    expectError(await post(stack.url, '/refresh-token', { refreshToken: l.refreshToken }), 401, 'AUTHENTICATION_FAILED');
    const r = await post(stack.url, '/refresh-token', { refreshToken: l.refreshToken }, lapsed);
    expect(r.status, r.text).to.equal(200);
    // an access token as the refresh token is not a refresh token
    expectError(await post(stack.url, '/refresh-token', { refreshToken: String(r.body.token) }, String(r.body.token)), 401, 'AUTHENTICATION_FAILED');
  });

  it("{refreshToken} wins over {id}; the bearer must come from the refresh token's own session", async function () {
    const phone = randomPhone();
    const a = (await fullLogin(stack.url, { phone })).login;
    const b = (await fullLogin(stack.url, { phone })).login;
    expect(b.user.id).to.equal(a.user.id);
    // same user, other session (another device): refused, and nothing is spent
    expectError(await post(stack.url, '/refresh-token', { refreshToken: b.refreshToken }, a.token), 401, 'AUTHENTICATION_FAILED');
    expect(await profileStatus(b.token)).to.equal(200);
    const both = await post(stack.url, '/refresh-token', { refreshToken: b.refreshToken, id: 'someone-else' }, b.token);
    expect(both.status, both.text).to.equal(200);
  });

  it('an expired refresh token is 401 REFRESH_TOKEN_EXPIRED', async function () {
    const l = await login();
    const expired = forge(l.refreshToken, { iat: now() - 7200, exp: now() - 60 });
    expectError(await post(stack.url, '/refresh-token', { refreshToken: expired }, l.token), 401, 'REFRESH_TOKEN_EXPIRED');
  });

  it('{id} rotates with an unexpired access token of that user; another id is 403 FORBIDDEN', async function () {
    const l = await login();
    const r = await post(stack.url, '/refresh-token', { id: l.user.id }, l.token);
    expect(r.status, r.text).to.equal(200);
    expect(r.body.token).to.be.a('string');
    expect(r.body.refreshToken).to.be.a('string');
    // the refresh token handed out before is spent by the rotation
    expectError(await post(stack.url, '/refresh-token', { refreshToken: l.refreshToken }, String(r.body.token)), 401, 'AUTHENTICATION_FAILED');
    const l2 = await login();
    expectError(await post(stack.url, '/refresh-token', { id: l.user.id }, l2.token), 403, 'FORBIDDEN');
    expectError(await post(stack.url, '/refresh-token', { id: l2.user.id }, forge(l2.token, { exp: now() - 60 })), 401, 'AUTHENTICATION_FAILED');
  });

  it('refresh and logout bodies of the wrong shape are 400 VALIDATION_ERROR, null included', async function () {
    const l = await login();
    for (const body of [{}, { refreshToken: null }, { refreshToken: 42 }, { refreshToken: '' }, { id: null }, { id: ['x'] }, { id: '' }]) {
      expectError(await post(stack.url, '/refresh-token', body, l.token), 400, 'VALIDATION_ERROR');
    }
    for (const body of [{}, { userId: null }, { id: null }, { userId: 7 }, { id: { a: 1 } }, { userId: '' }]) {
      expectError(await post(stack.url, '/logout', body, l.token), 400, 'VALIDATION_ERROR');
    }
    expect(await profileStatus(l.token)).to.equal(200);
  });

  it('logout with {userId} closes the session at once', async function () {
    const l = await login();
    const r = await post(stack.url, '/logout', { userId: l.user.id }, l.token);
    expect(r.status, r.text).to.equal(200);
    expect(r.body.success).to.equal(true);
    expect(r.body.message).to.be.a('string');
    expect(await profileStatus(l.token)).to.equal(401);
    expectError(await post(stack.url, '/refresh-token', { refreshToken: l.refreshToken }, l.token), 401, 'AUTHENTICATION_FAILED');
    expectError(await post(stack.url, '/logout', { userId: l.user.id }, l.token), 401, 'AUTHENTICATION_FAILED');
  });

  it('logout with {id} works too, and closes only that session', async function () {
    const first = await login();
    const l = await login();
    const r = await post(stack.url, '/logout', { id: l.user.id }, l.token);
    expect(r.status, r.text).to.equal(200);
    expect(await profileStatus(l.token)).to.equal(401);
    expect(await profileStatus(first.token)).to.equal(200);
  });

  it('logging out someone else is 403 FORBIDDEN and leaves both sessions open', async function () {
    const a = await login();
    const b = await login();
    expectError(await post(stack.url, '/logout', { userId: b.user.id }, a.token), 403, 'FORBIDDEN');
    expectError(await post(stack.url, '/logout', { id: b.user.id }, a.token), 403, 'FORBIDDEN');
    expect(await profileStatus(a.token)).to.equal(200);
    expect(await profileStatus(b.token)).to.equal(200);
    expectError(await post(stack.url, '/logout', { userId: a.user.id, id: b.user.id }, a.token), 400, 'VALIDATION_ERROR');
    expectError(await post(stack.url, '/logout', {}, a.token), 400, 'VALIDATION_ERROR');
    expectError(await post(stack.url, '/logout', { userId: a.user.id }), 401, 'AUTHENTICATION_FAILED');
  });
});
