-- Cancel a registration (cancel-auth). Later checks answer PIN_NOT_FOUND.
-- ARGV: prefix, pinHash
-- Returns {outcome, pinId}; outcome: not_found | expired | cancelled
local p, h = ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rk = p .. ':reg:' .. h
local cur = redis.call('HMGET', rk, 'i', 'e', 'x', 's')
if not cur[1] then return {'not_found', ''} end
if cur[4] == 'p' and now >= tonumber(cur[3]) then return {'expired', cur[1]} end
local ek = p .. ':emo:' .. cur[2]
if redis.call('GET', ek) == h then redis.call('DEL', ek) end
redis.call('ZREM', p .. ':active', h)
redis.call('DEL', rk)
return {'cancelled', cur[1]}
