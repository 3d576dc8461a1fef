-- The intake pump's lock: taken when free, extended when held by the same token.
-- KEYS[1] = lock key; ARGV[1] = token, ARGV[2] = ttl ms (1 releases it at once).
-- Returns 1 when the caller holds the lock, 0 when another pump does.
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
