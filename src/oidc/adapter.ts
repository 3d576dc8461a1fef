import type { RedisClient } from '../redis/connection.js';
import type { Adapter, AdapterPayload } from 'oidc-provider';

/**
 * oidc-provider's storage (sessions, interactions, codes, tokens, grants) in Redis under
 * `<KEY_PREFIX>:oidc:`, so every web node serves every step of a flow. One JSON value per
 * model instance with the provider's expiry as TTL; consumable models (codes, refresh tokens)
 * are hashes so `consume` marks them in place; a list per grant finds its tokens to revoke
 * (a reused code revokes what it issued). The shape follows the provider's Redis example.
 */
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);
const CONSUMABLE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

export function redisAdapterFactory(redis: RedisClient, prefix: string): (name: string) => Adapter {
  const base = `${prefix}:oidc`;
  const grantKey = (id: string): string => `${base}:grant:${id}`;
  const uidKey = (uid: string): string => `${base}:uid:${uid}`;
  const userCodeKey = (code: string): string => `${base}:usercode:${code}`;

  return (name: string): Adapter => {
    const key = (id: string): string => `${base}:${name}:${id}`;
    const consumable = CONSUMABLE.has(name);

    const find = async (id: string): Promise<AdapterPayload | undefined> => {
      if (consumable) {
        const h = await redis.hgetall(key(id));
        if (!h.payload) return undefined;
        const payload = JSON.parse(h.payload) as AdapterPayload;
        return h.consumed ? { ...payload, consumed: Number(h.consumed) } : payload;
      }
      const raw = await redis.get(key(id));
      return raw ? (JSON.parse(raw) as AdapterPayload) : undefined;
    };

    return {
      async upsert(id, payload, expiresIn) {
        const k = key(id);
        const multi = redis.multi();
        if (consumable) multi.del(k).hset(k, 'payload', JSON.stringify(payload));
        else multi.set(k, JSON.stringify(payload));
        if (expiresIn) multi.expire(k, expiresIn);
        if (GRANTABLE.has(name) && payload.grantId) {
          const g = grantKey(payload.grantId);
          multi.rpush(g, k);
          // the grant's list lives as long as its longest-lived token
          if (expiresIn) multi.expire(g, expiresIn, 'GT').expire(g, expiresIn, 'NX');
        }
        const ttl = expiresIn || 3600;
        if (payload.userCode) multi.set(userCodeKey(payload.userCode), id, 'EX', ttl);
        if (payload.uid) multi.set(uidKey(payload.uid), id, 'EX', ttl);
        await multi.exec();
      },
      find,
      async findByUid(uid) {
        const id = await redis.get(uidKey(uid));
        return id ? find(id) : undefined;
      },
      async findByUserCode(code) {
        const id = await redis.get(userCodeKey(code));
        return id ? find(id) : undefined;
      },
      async consume(id) {
        await redis.hset(key(id), 'consumed', Math.floor(Date.now() / 1000));
      },
      async destroy(id) {
        await redis.del(key(id));
      },
      async revokeByGrantId(grantId) {
        const g = grantKey(grantId);
        const members = await redis.lrange(g, 0, -1);
        await redis.del(g, ...members);
      },
    };
  };
}
