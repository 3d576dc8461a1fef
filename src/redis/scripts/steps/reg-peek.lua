-- Step of the expiry sweep on a registration's slot: its id, state and expiry (read only).
-- KEYS[1] registration; ARGV: pinHash, then the carry (the registrations read before)
-- Returns {'>', carry..., pinHash, pinId, state, expiresAt} ('' for a registration that is gone)
local cur = redis.call('HMGET', KEYS[1], 'i', 's', 'x')
local out = { '>', unpack(ARGV, 2) }
out[#out + 1] = ARGV[1]
out[#out + 1] = cur[1] or ''
out[#out + 1] = cur[2] or ''
out[#out + 1] = cur[3] or ''
return out
