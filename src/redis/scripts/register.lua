-- Register a PIN, atomically: idempotent for the same PIN + emoji string while it lives,
-- conflict when either is held by another active registration.
-- ARGV: prefix, pinHash, emojiHash, newPinId, ttlMs, memoryMs
-- Returns {outcome, pinId, msLeft, state, expiresAt}; outcome: created | existing | conflict
-- (expiresAt: ms, Redis clock, for the per-second expiry sweep)
local p, h, e, newId = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local ttl, mem = tonumber(ARGV[5]), tonumber(ARGV[6])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rk = p .. ':reg:' .. h
local ek = p .. ':emo:' .. e
local ak = p .. ':active'

local cur = redis.call('HMGET', rk, 'i', 'e', 'x', 's')
if cur[1] then
  local x = tonumber(cur[3])
  local live = (cur[4] ~= 'p') or (now < x)
  if live then
    if cur[2] == e then return {'existing', cur[1], x - now, cur[4], x} end
    return {'conflict', '', 0, '', 0}
  end
  -- an expired registration of this PIN: replaced below
end

local holder = redis.call('GET', ek)
if holder and holder ~= h then return {'conflict', '', 0, '', 0} end

local x = now + ttl
redis.call('DEL', rk)
redis.call('HSET', rk, 'i', newId, 'e', e, 'x', x, 's', 'p')
redis.call('PEXPIREAT', rk, x + mem)
redis.call('SET', ek, h, 'PXAT', x)
-- left to the expiry sweep once due (a trim here would hide it from the sweep's pin-expired)
redis.call('ZADD', ak, x, h)
return {'created', newId, ttl, 'p', x}
