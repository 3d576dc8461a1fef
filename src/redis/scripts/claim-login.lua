-- Step 1 of a login, atomic so that two workers handling messages for one registration make
-- one login, and a gateway's repeated delivery makes none: de-duplicate the message id, match
-- the chat message to a registration, find or create the user by phone, open a session.
-- A retry of the same job (same nonce) resumes the claim it made, or finds its finished login
-- (an attempt can fail after the login, e.g. while queueing the reply): never "no match".
--
-- With confirmation on, a matching code does not log in: the registration waits for the
-- person's answer (state 'c', phone in `ph`, `confirm:<phone>` points at it until its expiry,
-- its emoji string stays held). YES from that phone opens the session as a code would have;
-- NO ends the registration (state 'd'). Answers from any other phone find nothing.
--
-- ARGV: prefix, messageId, nonce, emojiHash, phone, newUserId, name, surname, newSid,
--       newRefreshJti, sessionTtlMs, graceMs, dedupTtlSeconds, maxSessions, mode, confirm
--   mode: code (the text was an emoji string: emojiHash set) | yes | no (answers, by phone)
--   confirm: 1 when a matched code must be confirmed in the chat first
-- Returns {outcome, pinId, pinHash, sid, refreshJti, userId, name, surname, phone, roles}
--      or {'completed', pinId, pinHash, resultJson} or {'done', sessionOpen '1' | '0'}
--      or {'ask', pinId, pinHash, expiresAt, origin} or {'denied', pinId, pinHash, origin}
-- outcome: duplicate | no_match | unanswered (yes/no with nothing awaiting it) | claimed |
--          completed (this job's login, uncollected) | done (this job's login, already
--          collected or cancelled; '1' when the session it opened is still open, so a retry
--          after a crash between the login and its reply still answers the person) | ask | denied
local p, msgId, nonce, e, phone = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local newUid, name, surname, newSid, newRj = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
local sessTtl, grace, dedupTtl = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local maxSessions, mode, confirm = tonumber(ARGV[14]), ARGV[15], ARGV[16] == '1'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nomatch = (mode == 'code') and 'no_match' or 'unanswered'
local ck = K.confirm(p, phone)

local mk = K.msg(p, msgId)
local seen = redis.call('GET', mk)
local h = nil
-- true when an earlier attempt of this very job claimed (or denied) a registration
local ours = false
-- the session an earlier attempt of this job opened, if any, and its user
local ourSid, ourUid = nil, nil
if seen then
  local parts = {}
  for part in string.gmatch(seen, '[^|]+') do parts[#parts + 1] = part end
  if parts[1] ~= nonce then return {'duplicate'} end
  if parts[2] then
    h = parts[2]
    ours = true
    ourSid, ourUid = parts[3], parts[4]
  end
else
  redis.call('SET', mk, nonce, 'EX', dedupTtl)
end

if not h then h = redis.call('GET', mode == 'code' and K.emo(p, e) or ck) end
if not h then return {nomatch} end
local rk = K.reg(p, h)
local cur = redis.call('HMGET', rk, 'i', 'x', 's', 'm', 'u', 'd', 'j', 'e', 'r', 'o', 'ph')
-- this job's login, already collected (or cancelled): whether the session it opened is open
local function done()
  return {'done', (ourSid and ourUid and redis.call('EXISTS', K.sess(p, ourUid, ourSid)) == 1) and '1' or '0'}
end
if not cur[1] then return ours and done() or {nomatch} end
local live = now < tonumber(cur[2])
local askedHere = cur[3] == 'c' and cur[11] == phone
local origin = cur[10] or ''

-- no longer held by this registration: free the emoji string and the phone's question
local function release()
  local ek = K.emo(p, cur[8])
  if redis.call('GET', ek) == h then redis.call('DEL', ek) end
  if cur[11] and redis.call('GET', K.confirm(p, cur[11])) == h then redis.call('DEL', K.confirm(p, cur[11])) end
  redis.call('ZREM', K.active_of(p, h), h)
end

local open = false
if not ours and live and mode == 'code' and cur[8] == e and (cur[3] == 'p' or askedHere) then
  if confirm then
    -- asked (again, when the person sends the code once more): YES or NO from this phone decides
    redis.call('HSET', rk, 's', 'c', 'ph', phone)
    redis.call('SET', ck, h, 'PXAT', cur[2])
    return {'ask', cur[1], h, cur[2], origin}
  end
  open = true
elseif not ours and live and mode == 'yes' and askedHere then
  open = true
elseif not ours and live and mode == 'no' and askedHere then
  redis.call('HSET', rk, 's', 'd', 'm', msgId)
  release()
  redis.call('SET', mk, nonce .. '|' .. h, 'KEEPTTL')
  return {'denied', cur[1], h, origin}
elseif cur[3] == 'd' and cur[4] == msgId then
  return {'denied', cur[1], h, origin}
end

local uid, sid, rj
if open then
  local pk = K.phone(p, phone)
  uid = redis.call('GET', pk)
  if not uid then
    uid = newUid
    redis.call('SET', pk, uid)
    redis.call('HSET', K.user(p, uid), 'id', uid, 'name', name, 'surname', surname,
      'phone', phone, 'roles', '["user"]', 'createdAt', now)
  end
  sid, rj = newSid, newRj
  local sk = K.sess(p, uid, sid)
  redis.call('HSET', sk, 'u', uid, 'r', rj, 'c', now, 'l', now, 'o', origin)
  redis.call('PEXPIRE', sk, sessTtl)
  -- the user's session index: expired members trimmed here, the oldest closed past the cap
  local ik = K.usess(p, uid)
  redis.call('ZREMRANGEBYSCORE', ik, '-inf', now)
  redis.call('ZADD', ik, now + sessTtl, sid)
  local over = redis.call('ZCARD', ik) - maxSessions
  if over > 0 then
    for _, old in ipairs(redis.call('ZRANGE', ik, 0, over - 1)) do redis.call('DEL', K.sess(p, uid, old)) end
    redis.call('ZREMRANGEBYRANK', ik, 0, over - 1)
  end
  redis.call('PEXPIRE', ik, sessTtl)
  redis.call('HSET', rk, 's', 'm', 'm', msgId, 'u', uid, 'd', sid, 'j', rj)
  -- the emoji string is free for new registrations from the moment of the login
  release()
  local keep = math.max(tonumber(cur[2]) - now, grace)
  if redis.call('PTTL', rk) < keep then redis.call('PEXPIRE', rk, keep) end
  redis.call('SET', mk, nonce .. '|' .. h .. '|' .. sid .. '|' .. uid, 'KEEPTTL')
elseif cur[3] == 'm' and cur[4] == msgId then
  uid, sid, rj = cur[5], cur[6], cur[7]
elseif cur[3] == 'v' and cur[4] == msgId then
  return {'completed', cur[1], h, cur[9]}
elseif ours then
  return done()
else
  return {nomatch}
end

local u = redis.call('HMGET', K.user(p, uid), 'id', 'name', 'surname', 'phone', 'roles')
return {'claimed', cur[1], h, sid, rj, u[1] or uid, u[2] or '', u[3] or '', u[4] or phone, u[5] or '["user"]'}
