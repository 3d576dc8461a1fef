-- Step 2 of a login: store the issued result for check-login (collectable once, for at least
-- the grace period even past the PIN's lifetime).
-- ARGV: prefix, pinHash, messageId, resultJson, graceMs
-- Returns 1 when this call completed the login, 2 when it was already complete, 0 when the
-- registration is gone (cancelled or collected meanwhile).
local p, h, msgId, result, grace = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rk = p .. ':reg:' .. h
local cur = redis.call('HMGET', rk, 's', 'm', 'x')
if cur[2] ~= msgId then return 0 end
if cur[1] == 'v' then return 2 end
if cur[1] ~= 'm' then return 0 end
redis.call('HSET', rk, 's', 'v', 'r', result, 'v', now)
redis.call('PEXPIREAT', rk, math.max(tonumber(cur[3]), now + grace))
return 1
