-- The delayed expiry job: confirm that this registration (same pinId) is still pending and its
-- lifetime has ended. Redis' own TTLs already freed the emoji string; this tidies the active set.
-- ARGV: prefix, pinHash, pinId
-- Returns 1 expired now, 0 nothing to do (verified, cancelled, replaced), -N not yet (N ms left)
local p, h, pinId = ARGV[1], ARGV[2], ARGV[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rk = p .. ':reg:' .. h
local cur = redis.call('HMGET', rk, 'i', 's', 'x')
if cur[1] ~= pinId or cur[2] ~= 'p' then return 0 end
local x = tonumber(cur[3])
if now < x then return -(x - now) end
redis.call('ZREM', p .. ':active', h)
return 1
