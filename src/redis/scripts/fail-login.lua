-- A login job failed for good (its last attempt): if it had claimed a registration and not
-- completed it ('m'), the login ends in a clear state: 'f' (check-login: 410 LOGIN_FAILED for
-- the rest of the registration's memory), and the session opened at the claim is closed.
-- ARGV: prefix, messageId, nonce, keepMs
-- Returns {pinHash, pinId} when it ended a login, else {}
local p, msgId, nonce, keep = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local seen = redis.call('GET', K.msg(p, msgId))
if not seen then return {} end
-- nonce|pinHash[|sid|userId] (claim-login.lua)
local parts = {}
for part in string.gmatch(seen, '[^|]+') do parts[#parts + 1] = part end
-- never claimed, or claimed by another delivery of the message
if parts[1] ~= nonce or not parts[2] then return {} end
local h = parts[2]
local rk = K.reg(p, h)
local cur = redis.call('HMGET', rk, 'i', 's', 'm', 'd', 'u')
if cur[2] ~= 'm' or cur[3] ~= msgId then return {} end
if cur[4] and cur[5] then
  redis.call('DEL', K.sess(p, cur[5], cur[4]))
  redis.call('ZREM', K.usess(p, cur[5]), cur[4])
end
redis.call('HSET', rk, 's', 'f')
redis.call('HDEL', rk, 'r')
if redis.call('PTTL', rk) < keep then redis.call('PEXPIRE', rk, keep) end
return {h, cur[1]}
