-- Step of register-pin on the active bucket's slot: the registration joins its bucket of the
-- expiry sweep (left there once due: a trim here would hide it from the sweep's pin-expired).
-- Before the registration is written, so a crash between them leaves an entry the sweep drops
-- (its registration is missing), never a registration the sweep would not announce.
-- A decoy counts as a creation (an entry of its own, `~pinId`, that no registration has: the
-- sweep drops it at its time), so the number of active entries never tells a live PIN from a
-- free one.
-- KEYS[1] active bucket; ARGV: pinHash, newPinId, then from the steps before: expiresAt[,
--   outcome, candidateIndex, emojiHash]
-- Returns {'retry'} when no emoji string is held (every drawn candidate was taken), else the
--   carry unchanged, after '>'
if not ARGV[4] then return { 'retry' } end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4] == 'decoy' and ('~' .. ARGV[2]) or ARGV[1])
return { '>', ARGV[3], ARGV[4], ARGV[5], ARGV[6] }
