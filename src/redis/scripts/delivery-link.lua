-- delivery-link: delivery tracking on the gateway id's slot: record which outbound job the
-- gateway's message id belongs to, and hand over the statuses that arrived before it (the
-- webhook can beat the send call's answer). They stay until delivery-drop-early, after
-- delivery-apply has applied them, so a crash between the calls loses none (the worker's retry
-- applies them).
-- KEYS: gateway id → job id, early statuses of that gateway id; ARGV: jobId, ttl (s)
-- Reply: {early1, early2, ...} (each 'status\nat\nerror')
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return redis.call('LRANGE', KEYS[2], 0, -1)
