import { expect } from 'chai';
import { fullLogin } from '../helpers/flow.js';
import { get, post } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { expectError, sleep } from './support.js';

const ACCESS_TTL = 2;

/**
 * A web node remembers access tokens it has verified (src/auth/tokens.ts): what a remembered
 * token may still not do. Default ES256 keys; short-lived access tokens.
 */
describe('core: remembered access tokens keep every check', function () {
  let stack: InProcessStack;
  before(async function () {
    stack = await startStack({ inProcess: true, name: 'core-tcache', workers: 1, env: { CHAT_REPLIES: 'false', ACCESS_TOKEN_TTL: String(ACCESS_TTL) } });
  });
  after(async function () {
    await stack?.stop();
  });

  it('a closed session is refused at once, though its token was verified before', async function () {
    const { login } = await fullLogin(stack.url);
    for (let i = 0; i < 3; i++) expect((await get(stack.url, '/profile', login.token)).status).to.equal(200);
    expect((await post(stack.url, '/logout', { userId: login.user.id }, login.token)).status).to.equal(200);
    expectError(await get(stack.url, '/profile', login.token), 401, 'AUTHENTICATION_FAILED');
  });

  it('expiry is checked on every use: a remembered token lapses; /refresh-token still takes it as proof', async function () {
    this.timeout(20000);
    const { login } = await fullLogin(stack.url);
    expect((await get(stack.url, '/profile', login.token)).status).to.equal(200);
    const exp = (JSON.parse(Buffer.from(login.token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp;
    await sleep(exp * 1000 - Date.now() + 1100);
    expectError(await get(stack.url, '/profile', login.token), 401, 'AUTHENTICATION_FAILED');
    expect((await post(stack.url, '/refresh-token', { refreshToken: login.refreshToken }, login.token)).status).to.equal(200);
  });

  it("another payload under a remembered token's signature is refused", async function () {
    const { login } = await fullLogin(stack.url);
    expect((await get(stack.url, '/profile', login.token)).status).to.equal(200);
    const [header, payload, signature] = login.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, roles: ['admin'] })).toString('base64url')}.${signature}`;
    expectError(await get(stack.url, '/profile', forged), 401, 'AUTHENTICATION_FAILED');
  });
});
