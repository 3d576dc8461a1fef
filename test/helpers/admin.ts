import { expect } from 'chai';
import { fullLogin } from './flow.js';
import { runNode } from './processes.js';
import { REDIS_URL } from './redis.js';

/**
 * Gives a person the `admin` role as an operator gives the first admin: the built command line
 * `accounts grant-admin <userId>` (src/bin/accounts.ts) on the test's Redis and KEY_PREFIX.
 */
export async function grantAdmin(prefix: string, who: string): Promise<void> {
  const r = await runNode(['dist/src/bin/accounts.js', 'grant-admin', who], { REDIS_URL, KEY_PREFIX: prefix });
  expect(r.code, r.stderr).to.equal(0);
  expect(r.stdout).to.match(/ is now an admin | was an admin already /);
}

/**
 * A signed-in person given the `admin` role through the command line. Their access token opens
 * the admin API (its door reads the record's roles on each request).
 */
export async function adminLogin(base: string, prefix: string, opts: { phone?: string } = {}) {
  const { login } = await fullLogin(base, { pushName: 'Ada Admin', ...opts });
  await grantAdmin(prefix, login.user.id);
  return login;
}
