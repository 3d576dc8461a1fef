-- delivery-drop-early: the last call of delivery tracking: the early statuses are applied
-- (delivery-apply), drop them. None can be added meanwhile: once delivery-link recorded the
-- job, statuses go to it directly.
-- KEYS[1] early statuses of a gateway id; ARGV: none
-- Reply: 1 when there were some, else 0
return redis.call('DEL', KEYS[1])
