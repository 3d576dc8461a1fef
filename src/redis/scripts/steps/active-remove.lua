-- Step: a registration leaves its bucket of the expiry sweep (cancelled: nothing to announce).
-- KEYS[1] active bucket; ARGV: pinHash, then the carry of the steps before (passed on)
-- Returns {'>', carry...}
redis.call('ZREM', KEYS[1], ARGV[1])
return { '>', unpack(ARGV, 2) }
