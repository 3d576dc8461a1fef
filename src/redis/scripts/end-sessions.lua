-- end-sessions: close sessions of one user: one (DELETE /sessions/:id, logout) or all of them (sign out
-- everywhere, STOP in the chat). A session of another user is left alone and counts as not found.
-- Every access and refresh token of a closed session is refused from the next request on.
-- On the user's slot: the index is KEYS[1]; the sessions' keys are built from the session key
-- prefix under the same hash tag (keys.ts), as '*' only knows them once the index is read.
-- KEYS[1] the user's session index; ARGV: session key prefix (keys.session(userId, '')),
--   userId, sid ('*' = every session in the user's index)
-- Reply: the number of sessions closed
local sp, uid, sid = ARGV[1], ARGV[2], ARGV[3]
local ik = KEYS[1]
local sids = (sid == '*') and redis.call('ZRANGE', ik, 0, -1) or {sid}
local closed = 0
for _, s in ipairs(sids) do
  local sk = sp .. s
  if redis.call('HGET', sk, 'userId') == uid then
    redis.call('DEL', sk)
    closed = closed + 1
  end
end
if sid == '*' then redis.call('DEL', ik) else redis.call('ZREM', ik, sid) end
return closed
