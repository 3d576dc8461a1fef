-- fail-registration: fail-login on the registration's slot: a login job failed for good (its
-- last attempt); if it had claimed the registration and not completed it ('m'), the login ends
-- in a clear state: 'f' (check-login: 410 LOGIN_FAILED for the rest of the registration's
-- memory). Already 'f' by this message (a retry after a crash before session-close): answers
-- the same session, so the caller closes it, but says it ended nothing new.
-- KEYS[1] registration; ARGV: messageId, keepMs
-- Reply: {'failed', pinId, sessionId, userId, first} (the claim's session, '' none; first: '1'
--   when this call ended the login, '0' when it was ended already) | {'none'} (not this job's
--   claim, or completed)
local rk, msgId, keep = KEYS[1], ARGV[1], tonumber(ARGV[2])
local cur = redis.call('HMGET', rk, 'i', 's', 'm', 'd', 'u')
if cur[3] ~= msgId or (cur[2] ~= 'm' and cur[2] ~= 'f') then return { 'none' } end
if cur[2] == 'f' then return { 'failed', cur[1], cur[4] or '', cur[5] or '', '0' } end
redis.call('HSET', rk, 's', 'f')
redis.call('HDEL', rk, 'r')
if redis.call('PTTL', rk) < keep then redis.call('PEXPIRE', rk, keep) end
return { 'failed', cur[1], cur[4] or '', cur[5] or '', '1' }
