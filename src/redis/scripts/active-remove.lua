-- active-remove: a registration leaves its bucket of the expiry sweep (cancelled: nothing to
-- announce).
-- KEYS[1] active bucket; ARGV: pinHash
-- Reply: 1 when it was there, else 0
return redis.call('ZREM', KEYS[1], ARGV[1])
