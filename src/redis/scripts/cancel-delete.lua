-- cancel-delete: the last call of cancel-auth: delete the registration, if it is still as
-- cancel-find saw it (a login may have claimed it meanwhile: then the caller runs the cancel
-- again, which also closes that login's session). Later checks answer PIN_NOT_FOUND.
-- KEYS[1] registration; ARGV: pinId, state, as cancel-find returned them
-- Reply: 'cancelled' | 'changed'
local cur = redis.call('HMGET', KEYS[1], 'i', 's')
-- gone already (a retry of this very cancel finished it): as good as cancelled
if not cur[1] then return 'cancelled' end
if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then return 'changed' end
redis.call('DEL', KEYS[1])
return 'cancelled'
