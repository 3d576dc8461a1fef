import { expect } from 'chai';
import { fullLogin } from './flow.js';
import { testRedis } from './redis.js';

/**
 * A signed-in person given the `admin` role, as the first admin is: their roles set on the user
 * record. Their access token opens the admin API (its door reads the record's roles).
 */
export async function adminLogin(base: string, prefix: string, opts: { phone?: string } = {}) {
  const { login } = await fullLogin(base, { pushName: 'Ada Admin', ...opts });
  const redis = testRedis();
  try {
    const key = `${prefix}:user:{u${login.user.id}}`;
    expect(await redis.exists(key)).to.equal(1);
    await redis.hset(key, 'roles', JSON.stringify(['user', 'admin']));
  } finally {
    redis.disconnect();
  }
  return login;
}
