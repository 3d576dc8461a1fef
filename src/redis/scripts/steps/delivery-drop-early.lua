-- Last step of delivery tracking: the early statuses are applied (delivery-apply), drop them.
-- None can be added meanwhile: once delivery-link recorded the job, statuses go to it directly.
-- KEYS[1] early statuses of a gateway id; ARGV: the carry (passed on)
-- Returns the carry
redis.call('DEL', KEYS[1])
return ARGV
