-- active-add: register-pin on the active bucket's slot: the registration joins its bucket of
-- the expiry sweep (left there once due: a trim here would hide it from the sweep's
-- pin-expired). Before the registration is written, so a crash between them leaves an entry
-- the sweep drops (its registration is missing), never a registration the sweep would not
-- announce. A decoy counts as a creation: an entry of its own, `~pinId`, that no registration
-- has (the sweep drops it at its time), so the number of active entries never tells a live PIN
-- from a free one.
-- KEYS[1] active bucket; ARGV: member (the PIN hash, or `~pinId` for a decoy), expiresAt
-- Reply: 1
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
