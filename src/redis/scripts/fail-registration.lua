-- fail-registration: fail-login on the registration's slot: a login job failed for good (its
-- last attempt); if it had claimed the registration and not completed it (claimed), the login
-- ends in a clear state: failed (check-login: 410 LOGIN_FAILED for the rest of the
-- registration's memory). Already failed by this message (a retry after a crash before session-close): answers
-- the same session, so the caller closes it, but says it ended nothing new.
-- KEYS[1] registration; ARGV: messageId, keepMs
-- Reply: {'failed', pinId, sessionId, userId, first} (the claim's session, '' none; first: '1'
--   when this call ended the login, '0' when it was ended already) | {'none'} (not this job's
--   claim, or completed)
local rk, msgId, keep = KEYS[1], ARGV[1], tonumber(ARGV[2])
local pinId, state, claimedBy, sessionId, userId = unpack(redis.call('HMGET', rk, 'pinId', 'state', 'messageId', 'sessionId', 'userId'))
if claimedBy ~= msgId or (state ~= 'claimed' and state ~= 'failed') then return { 'none' } end
if state == 'failed' then return { 'failed', pinId, sessionId or '', userId or '', '0' } end
redis.call('HSET', rk, 'state', 'failed')
redis.call('HDEL', rk, 'result')
if redis.call('PTTL', rk) < keep then redis.call('PEXPIRE', rk, keep) end
return { 'failed', pinId, sessionId or '', userId or '', '1' }
