-- cancel-delete: the last call of cancel-auth: delete the registration, if it is still as
-- cancel-find saw it (a login may have claimed it meanwhile: then the caller runs the cancel
-- again, which also closes that login's session). Later checks answer PIN_NOT_FOUND.
-- KEYS[1] registration; ARGV: pinId, state, as cancel-find returned them
-- Reply: 'cancelled' | 'changed'
local pinId, state = unpack(redis.call('HMGET', KEYS[1], 'pinId', 'state'))
-- gone already (a retry of this very cancel finished it): as good as cancelled
if not pinId then return 'cancelled' end
if pinId ~= ARGV[1] or state ~= ARGV[2] then return 'changed' end
redis.call('DEL', KEYS[1])
return 'cancelled'
