-- Rotate a session's refresh token. Presenting a spent one closes the whole session
-- (reuse detection); of two concurrent presentations of the same token at most one wins.
-- ARGV: prefix, sid, userId, presentedJti ('*' = the current one, for the {id} form), newJti, ttlMs
-- Returns ok | closed | reuse
local p, sid, uid, presented, newJti, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local sk = p .. ':sess:' .. sid
local cur = redis.call('HMGET', sk, 'u', 'r')
if not cur[1] or cur[1] ~= uid then return 'closed' end
if presented ~= '*' and cur[2] ~= presented then
  redis.call('DEL', sk)
  return 'reuse'
end
redis.call('HSET', sk, 'r', newJti)
redis.call('PEXPIRE', sk, ttl)
return 'ok'
