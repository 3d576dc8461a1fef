-- Close sessions of one user: one (DELETE /sessions/:id, logout) or all of them (sign out
-- everywhere, STOP in the chat). A session of another user is left alone and counts as not found.
-- Every access and refresh token of a closed session is refused from the next request on.
-- ARGV: prefix, userId, sid ('*' = every session in the user's index)
-- Returns the number of sessions closed
local p, uid, sid = ARGV[1], ARGV[2], ARGV[3]
local ik = K.usess(p, uid)
local sids = (sid == '*') and redis.call('ZRANGE', ik, 0, -1) or {sid}
local closed = 0
for _, s in ipairs(sids) do
  local sk = K.sess(p, uid, s)
  if redis.call('HGET', sk, 'u') == uid then
    redis.call('DEL', sk)
    closed = closed + 1
  end
end
if sid == '*' then redis.call('DEL', ik) else redis.call('ZREM', ik, sid) end
return closed
