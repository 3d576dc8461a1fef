-- Step 1 of a login, atomic so that two workers handling messages for one registration make
-- one login, and a gateway's repeated delivery makes none: de-duplicate the message id, match
-- the emoji string to a pending registration, find or create the user by phone, open a session.
-- A retry of the same job (same nonce) resumes the claim it made, or finds its finished login
-- (an attempt can fail after the login, e.g. while queueing the reply): never "no match".
-- ARGV: prefix, messageId, nonce, emojiHash, phone, newUserId, name, surname, newSid,
--       newRefreshJti, sessionTtlMs, graceMs, dedupTtlSeconds
-- Returns {outcome, pinId, pinHash, sid, refreshJti, userId, name, surname, phone, roles}
--      or {'completed', pinId, pinHash, resultJson} or {'done'}
-- outcome: duplicate | no_match | claimed | completed (this job's login, uncollected) |
--          done (this job's login, already collected or cancelled)
local p, msgId, nonce, e, phone = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local newUid, name, surname, newSid, newRj = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
local sessTtl, grace, dedupTtl = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local mk = p .. ':msg:' .. msgId
local seen = redis.call('GET', mk)
local h = nil
-- true when an earlier attempt of this very job claimed a registration
local ours = false
if seen then
  local sep = string.find(seen, '|', 1, true)
  local seenNonce = sep and string.sub(seen, 1, sep - 1) or seen
  if seenNonce ~= nonce then return {'duplicate'} end
  if sep then
    h = string.sub(seen, sep + 1)
    ours = true
  end
else
  redis.call('SET', mk, nonce, 'EX', dedupTtl)
end

if not h then h = redis.call('GET', p .. ':emo:' .. e) end
if not h then return {'no_match'} end
local rk = p .. ':reg:' .. h
local cur = redis.call('HMGET', rk, 'i', 'x', 's', 'm', 'u', 'd', 'j', 'e', 'r')
if not cur[1] then return {ours and 'done' or 'no_match'} end

local uid, sid, rj
-- a retry whose registration was since collected and registered anew must not claim the new one
if cur[3] == 'p' and not ours and now < tonumber(cur[2]) and cur[8] == e then
  local pk = p .. ':phone:' .. phone
  uid = redis.call('GET', pk)
  if not uid then
    uid = newUid
    redis.call('SET', pk, uid)
    redis.call('HSET', p .. ':user:' .. uid, 'id', uid, 'name', name, 'surname', surname,
      'phone', phone, 'roles', '["user"]', 'createdAt', now)
  end
  sid, rj = newSid, newRj
  local sk = p .. ':sess:' .. sid
  redis.call('HSET', sk, 'u', uid, 'r', rj, 'c', now)
  redis.call('PEXPIRE', sk, sessTtl)
  redis.call('HSET', rk, 's', 'm', 'm', msgId, 'u', uid, 'd', sid, 'j', rj)
  -- the emoji string is free for new registrations from the moment of the login
  redis.call('DEL', p .. ':emo:' .. e)
  redis.call('ZREM', p .. ':active', h)
  local keep = math.max(tonumber(cur[2]) - now, grace)
  if redis.call('PTTL', rk) < keep then redis.call('PEXPIRE', rk, keep) end
  redis.call('SET', mk, nonce .. '|' .. h, 'KEEPTTL')
elseif cur[3] == 'm' and cur[4] == msgId then
  uid, sid, rj = cur[5], cur[6], cur[7]
elseif cur[3] == 'v' and cur[4] == msgId then
  return {'completed', cur[1], h, cur[9]}
else
  return {ours and 'done' or 'no_match'}
end

local u = redis.call('HMGET', p .. ':user:' .. uid, 'id', 'name', 'surname', 'phone', 'roles')
return {'claimed', cur[1], h, sid, rj, u[1] or uid, u[2] or '', u[3] or '', u[4] or phone, u[5] or '["user"]'}
