-- complete-login: step 2 of a login: store the issued result for check-login (collectable once, for at least
-- the grace period even past the PIN's lifetime).
-- Touches the registration only, so it runs on a cluster as is (the last step of the login chain).
-- KEYS[1] = registration; ARGV: messageId, resultJson, graceMs
-- Reply: 1 when this call completed the login, 2 when it was already complete, 0 when the
-- registration is gone (cancelled or collected meanwhile).
local rk = KEYS[1]
local msgId, result, grace = ARGV[1], ARGV[2], tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state, claimedBy, expiresAt = unpack(redis.call('HMGET', rk, 'state', 'messageId', 'expiresAt'))
if claimedBy ~= msgId then return 0 end
if state == 'verified' then return 2 end
if state ~= 'claimed' then return 0 end
redis.call('HSET', rk, 'state', 'verified', 'result', result, 'verifiedAt', now)
redis.call('PEXPIREAT', rk, math.max(tonumber(expiresAt), now + grace))
return 1
