-- Check a login. A verified result is handed out once: it is deleted as it is read.
-- ARGV: prefix, pinHash
-- Returns {outcome, pinId, result}; outcome: not_found | pending | expired | verified
local p, h = ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rk = p .. ':reg:' .. h
local cur = redis.call('HMGET', rk, 'i', 'x', 's', 'r')
if not cur[1] then return {'not_found', '', ''} end
if cur[3] == 'v' then
  redis.call('DEL', rk)
  return {'verified', cur[1], cur[4]}
end
-- 'm': a worker has claimed the login and is issuing tokens; still pending for the client
if cur[3] == 'p' and now >= tonumber(cur[2]) then return {'expired', cur[1], ''} end
return {'pending', cur[1], ''}
