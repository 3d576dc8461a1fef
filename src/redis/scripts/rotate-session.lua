-- rotate-session: rotate a session's refresh token. Presenting a spent one closes the whole session
-- (reuse detection); of two concurrent presentations of the same token at most one wins.
-- Retry leeway: for reuseMs after a rotation, the token it replaced gets the same new pair
-- again (a client whose answer was lost retries), kept at rot:<sid>; later it is reuse.
-- Roles: the new pair was signed with the roles the caller expected (the presented access
-- token's); the rotation only happens if the user's stored roles are still exactly those,
-- else {roles, stored} and the caller signs again with the stored ones. One round trip when
-- nothing changed, and the roles signed are the roles stored at the moment of rotation.
-- All on the user's slot (keys.ts): one atomic step on a cluster too.
-- KEYS: session, the user's session index, the session's last rotation, the user
-- ARGV: sid, userId, presentedJti ('*' = the current one, for the {id} form), newJti, ttlMs,
--       newPairJson, reuseMs, rolesJson (as stored in the user hash)
-- Reply: {ok} | {closed} | {nouser} | {reuse} | {again, pairJson} | {roles, storedRolesJson}
local sid, uid, presented, newJti = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local ttl, pair, reuse, roles = tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7]), ARGV[8]
local sk, ik, rk, uk = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local user = redis.call('HMGET', uk, 'id', 'roles')
if not user[1] then return {'nouser'} end
local cur = redis.call('HMGET', sk, 'userId', 'refreshJti')
if not cur[1] or cur[1] ~= uid then return {'closed'} end
if presented ~= '*' and cur[2] ~= presented then
  local prev = redis.call('HMGET', rk, 'jti', 'pairJson')
  if prev[1] == presented then return {'again', prev[2]} end
  redis.call('DEL', sk, rk)
  redis.call('ZREM', ik, sid)
  return {'reuse'}
end
local stored = user[2] or '[]'
if stored ~= roles then return {'roles', stored} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- last used, as the sessions list shows it (a session in use refreshes every access-token lifetime)
redis.call('HSET', sk, 'refreshJti', newJti, 'lastUsedAt', now)
redis.call('PEXPIRE', sk, ttl)
redis.call('ZADD', ik, now + ttl, sid)
if redis.call('PTTL', ik) < ttl then redis.call('PEXPIRE', ik, ttl) end
if reuse > 0 and presented ~= '*' then
  -- jti and pairJson are the hash's only fields: HSET replaces the previous rotation's whole
  redis.call('HSET', rk, 'jti', presented, 'pairJson', pair)
  redis.call('PEXPIRE', rk, reuse)
end
return {'ok'}
