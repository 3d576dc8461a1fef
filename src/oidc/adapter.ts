import type { ChainableCommander } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { OidcLogins } from './logins.js';

/**
 * oidc-provider's storage (sessions, interactions, codes, tokens, grants) in Redis under
 * `<KEY_PREFIX>:oidc:`, so every web node serves every step of a flow. One JSON value per
 * model instance with the provider's expiry as TTL; consumable models (codes, refresh tokens)
 * are hashes so `consume` marks them in place; a list per grant finds its tokens to revoke
 * (a reused code revokes what it issued). The shape follows the provider's Redis example.
 *
 * Beyond the example: every record naming an account is indexed under that account (scored
 * by its expiry), and a grant's last code or token is noted, so the person's logins can be
 * listed and ended together (logins.ts); a grant or provider session from before the account's
 * last sign-out everywhere is not found.
 */
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
const CONSUMABLE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
/** What a sign-out everywhere kills when read: the time of their login against the sign-out's. */
const LOGIN_TIME: Record<string, (p: AdapterPayload) => number | undefined> = {
  Grant: (p) => p.iat,
  Session: (p) => p.loginTs,
};

export function redisAdapterFactory(redis: RedisClient, keys: Keys, logins: OidcLogins): (name: string) => Adapter {
  return (name: string): Adapter => {
    const key = (id: string): string => keys.oidc(name, id);
    const consumable = CONSUMABLE.has(name);
    const loginTime = LOGIN_TIME[name];

    const read = async (id: string): Promise<AdapterPayload | undefined> => {
      if (consumable) {
        const h = await redis.hgetall(key(id));
        if (!h.payload) return undefined;
        const payload = JSON.parse(h.payload) as AdapterPayload;
        return h.consumed ? { ...payload, consumed: Number(h.consumed) } : payload;
      }
      const raw = await redis.get(key(id));
      return raw ? (JSON.parse(raw) as AdapterPayload) : undefined;
    };

    const find = async (id: string): Promise<AdapterPayload | undefined> => {
      const payload = await read(id);
      if (!payload || !loginTime || !payload.accountId) return payload;
      // times are whole seconds: what began in the second of the sign-out is left to the sign-out's own deletions
      const signedOut = await logins.signedOutAt(payload.accountId);
      return ((loginTime(payload) ?? 0) + 1) * 1000 <= signedOut ? undefined : payload;
    };

    return {
      async upsert(id, payload, expiresIn) {
        const k = key(id);
        const now = Date.now();
        const ttl = expiresIn || 3600;
        // one transaction per key (each its own slot on a cluster), indexes before the record: a
        // sign-out never misses a record that exists (an index entry without its record is harmless)
        const writes: ChainableCommander[] = [];
        const on = (): ChainableCommander => {
          const m = redis.multi();
          writes.push(m);
          return m;
        };
        // the keys this record makes, all of which the account's sign-out must find
        const made = [k];
        const grantList = GRANTABLE.has(name) && payload.grantId ? keys.oidcGrantTokens(payload.grantId) : undefined;
        if (grantList) made.push(grantList);
        if (payload.uid) made.push(keys.oidcUid(payload.uid));
        if (payload.accountId) {
          const a = keys.oidcAccount(payload.accountId);
          // scored by expiry: what has expired by itself is dropped here, so the index stays the size of what lives
          const index = on()
            .zremrangebyscore(a, '-inf', now)
            .zadd(a, ...made.flatMap((m) => [expiresIn ? now + expiresIn * 1000 : '+inf', m]));
          if (expiresIn) index.expire(a, expiresIn, 'GT').expire(a, expiresIn, 'NX');
          if (grantList) {
            const l = keys.oidcLogins(payload.accountId);
            const used = on().hset(l, `u:${payload.grantId}`, now);
            if (expiresIn) used.expire(l, expiresIn, 'GT').expire(l, expiresIn, 'NX');
          }
        }
        if (grantList) {
          // the grant's list lives as long as its longest-lived token
          const list = on().rpush(grantList, k);
          if (expiresIn) list.expire(grantList, expiresIn, 'GT').expire(grantList, expiresIn, 'NX');
        }
        if (payload.userCode) on().set(keys.oidcUserCode(payload.userCode), id, 'EX', ttl);
        if (payload.uid) on().set(keys.oidcUid(payload.uid), id, 'EX', ttl);
        const record = on();
        if (consumable) record.del(k).hset(k, 'payload', JSON.stringify(payload));
        else record.set(k, JSON.stringify(payload));
        if (expiresIn) record.expire(k, expiresIn);
        await Promise.all(writes.map((w) => w.exec()));
      },
      find,
      async findByUid(uid) {
        const id = await redis.get(keys.oidcUid(uid));
        return id ? find(id) : undefined;
      },
      async findByUserCode(code) {
        const id = await redis.get(keys.oidcUserCode(code));
        return id ? find(id) : undefined;
      },
      async consume(id) {
        await redis.hset(key(id), 'consumed', Math.floor(Date.now() / 1000));
      },
      async destroy(id) {
        await redis.del(key(id));
      },
      async revokeByGrantId(grantId) {
        const g = keys.oidcGrantTokens(grantId);
        const members = await redis.lrange(g, 0, -1);
        // one key a command: on a cluster they live in different slots
        await Promise.all([g, ...members].map((m) => redis.del(m)));
      },
    };
  };
}
