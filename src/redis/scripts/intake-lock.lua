-- The intake pump's lock: taken when free, extended when held by the same token.
-- ARGV[1] = lock key, ARGV[2] = token, ARGV[3] = ttl ms (1 releases it at once).
-- Returns 1 when the caller holds the lock, 0 when another pump does.
local holder = redis.call('GET', ARGV[1])
if holder == false or holder == ARGV[2] then
  redis.call('SET', ARGV[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
