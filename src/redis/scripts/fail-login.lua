-- A login job failed for good (its last attempt): if it had claimed a registration and not
-- completed it ('m'), the login ends in a clear state: 'f' (check-login: 410 LOGIN_FAILED for
-- the rest of the registration's memory), and the session opened at the claim is closed.
-- ARGV: prefix, messageId, nonce, keepMs
-- Returns {pinHash, pinId} when it ended a login, else {}
local p, msgId, nonce, keep = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local seen = redis.call('GET', p .. ':msg:' .. msgId)
if not seen then return {} end
-- nonce, then (once claimed) the PIN hash and the session id, '|'-separated (claim-login.lua)
local parts = {}
for part in string.gmatch(seen, '[^|]+') do parts[#parts + 1] = part end
-- never claimed, or claimed by another delivery of the message
if parts[1] ~= nonce or not parts[2] then return {} end
local h = parts[2]
local rk = p .. ':reg:' .. h
local cur = redis.call('HMGET', rk, 'i', 's', 'm', 'd', 'u')
if cur[2] ~= 'm' or cur[3] ~= msgId then return {} end
if cur[4] then
  redis.call('DEL', p .. ':sess:' .. cur[4])
  if cur[5] then redis.call('ZREM', p .. ':usess:' .. cur[5], cur[4]) end
end
redis.call('HSET', rk, 's', 'f')
redis.call('HDEL', rk, 'r')
if redis.call('PTTL', rk) < keep then redis.call('PEXPIRE', rk, keep) end
return {h, cur[1]}
