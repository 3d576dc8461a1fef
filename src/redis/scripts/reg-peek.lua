-- reg-peek: the expiry sweep on a registration's slot: its id, state and expiry (read only).
-- KEYS[1] registration; ARGV: none
-- Reply: {pinId, state, expiresAt} ('' each for a registration that is gone)
local cur = redis.call('HMGET', KEYS[1], 'i', 's', 'x')
return { cur[1] or '', cur[2] or '', cur[3] or '' }
