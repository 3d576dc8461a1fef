-- reg-peek: the expiry sweep on a registration's slot: its id, state and expiry (read only).
-- KEYS[1] registration; ARGV: none
-- Reply: {pinId, state, expiresAt} ('' each for a registration that is gone)
local pinId, state, expiresAt = unpack(redis.call('HMGET', KEYS[1], 'pinId', 'state', 'expiresAt'))
return { pinId or '', state or '', expiresAt or '' }
