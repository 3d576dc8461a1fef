-- reg-peek: the expiry sweep on a registration's slot: its id, state and expiry (read only).
-- KEYS[1] registration; ARGV: none
-- Reply: {pinId, state, expiresAt, origin} ('' each for a registration that is gone)
local pinId, state, expiresAt, origin = unpack(redis.call('HMGET', KEYS[1], 'pinId', 'state', 'expiresAt', 'origin'))
return { pinId or '', state or '', expiresAt or '', origin or '' }
