-- delivery-lookup: a gateway's delivery status on the gateway id's slot: which job is it? Unknown yet
-- (the worker has not recorded the id): the status waits for delivery-link (last 8, 10 min).
-- KEYS: gateway id → job id, early statuses of that gateway id; ARGV: status, at (ms), error
-- Reply: {'job', jobId} | {'unknown'}
local jobId = redis.call('GET', KEYS[1])
if jobId then return { 'job', jobId } end
redis.call('RPUSH', KEYS[2], ARGV[1] .. '\n' .. ARGV[2] .. '\n' .. ARGV[3])
redis.call('LTRIM', KEYS[2], -8, -1)
redis.call('EXPIRE', KEYS[2], 600)
return { 'unknown' }
