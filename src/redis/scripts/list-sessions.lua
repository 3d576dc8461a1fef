-- list-sessions: the user's open sessions, tidying the index as it reads it (members whose session expired or
-- was closed leave it), so the index holds no more than the open sessions.
-- On the user's slot: the sessions' keys are built from the session key prefix under the
-- index's hash tag (keys.ts), as they are only known once the index is read.
-- KEYS[1] the user's session index; ARGV: session key prefix (keys.session(userId, '')), userId
-- Reply: {sid1, created1, lastUsed1, origin1, expiresAt1, sid2, ...}
local sp, uid = ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ik = KEYS[1]
redis.call('ZREMRANGEBYSCORE', ik, '-inf', now)
local out = {}
local members = redis.call('ZRANGE', ik, 0, -1, 'WITHSCORES')
for i = 1, #members, 2 do
  local s = members[i]
  local cur = redis.call('HMGET', sp .. s, 'userId', 'createdAt', 'lastUsedAt', 'origin')
  if cur[1] == uid then
    out[#out + 1] = s
    out[#out + 1] = cur[2] or ''
    out[#out + 1] = cur[3] or cur[2] or ''
    out[#out + 1] = cur[4] or ''
    out[#out + 1] = members[i + 1]
  else
    redis.call('ZREM', ik, s)
  end
end
return out
