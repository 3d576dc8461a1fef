-- The login as one-slot steps (docs/scaling.md, "A login as one-slot steps"): the one source of
-- the chain, included by claim-login.lua, which runs it in one call on a single server and one
-- step per call on a cluster.
--
-- Each step names the keys it needs (kind and the values that build it: claim-login.lua turns
-- them into keys) and touches only those, all in one slot. It reads and updates the chain's
-- state `s` and returns the name of the next step, or nil and the chain's result. Every step is
-- idempotent on the message id and the job's nonce, so a job retried after a crash between two
-- steps (on a cluster) runs the chain again from the start and finishes it instead of doubling
-- it; on a single server the whole chain is one script, atomic.
--
-- The registration hash (its fields: src/redis/keys.ts, `registration`): a claim moves its
-- state from pending (or awaiting, after the chat question) to claimed by `messageId`, with the
-- claim's userId, sessionId and refreshJti; a NO to denied; askedOf is the sender asked (its
-- phone, else its first identifier: s.addr).
-- The message key: the job's nonce, then once it claimed (or denied) a registration
-- `nonce|pinHash[|sid|uid]`, which tells a retry the claim is its own.

local function login_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function login_nomatch(s)
  return { s.mode == 'code' and 'no_match' or 'unanswered' }
end

-- DEL key when it still points at the registration (an emoji string or a phone's question)
local function login_release(key, h)
  if redis.call('GET', key) == h then redis.call('DEL', key) end
end

-- a sender's open chat questions (confirm key: a hash of number → {pinHash, expiresAt, origin,
-- askedAt}), past ones dropped; `number` added to each
local function login_questions(key)
  local now, open, all = login_now(), {}, redis.call('HGETALL', key)
  for i = 1, #all, 2 do
    local q = cjson.decode(all[i + 1])
    if q.expiresAt > now then
      q.number = all[i]
      open[#open + 1] = q
    else
      redis.call('HDEL', key, all[i])
    end
  end
  table.sort(open, function(a, b) return a.expiresAt < b.expiresAt end)
  return open
end

-- the question about registration h leaves the sender's open ones
local function login_release_question(key, h)
  for _, q in ipairs(login_questions(key)) do
    if q.pinHash == h then redis.call('HDEL', key, q.number) end
  end
end

local LOGIN_STEPS = {}
for name, step in pairs(ID_STEPS) do LOGIN_STEPS[name] = step end

-- de-duplicate the message: another nonce is a redelivery; ours with a pin hash is a retry
LOGIN_STEPS.msg = {
  keys = function(s) return { { 'msg', s.msgId } } end,
  run = function(s, k)
    local seen = redis.call('GET', k[1])
    if seen then
      local parts = {}
      for part in string.gmatch(seen, '[^|]+') do parts[#parts + 1] = part end
      if parts[1] ~= s.nonce then return nil, { 'duplicate' } end
      if parts[2] then
        s.h, s.ours, s.ourSid, s.ourUid = parts[2], true, parts[3] or false, parts[4] or false
        return 'reg'
      end
    else
      redis.call('SET', k[1], s.nonce, 'EX', s.dedupTtl)
    end
    if s.mode == 'renumber' then return identity_start(s) end
    return 'lookup'
  end,
}

-- the registration a code names (emoji index), or the one this sender was asked about (YES / NO)
LOGIN_STEPS.lookup = {
  keys = function(s) return { s.mode == 'code' and { 'emo', s.emojiHash } or { 'confirm', s.addr } } end,
  run = function(s, k)
    local h
    if s.mode == 'code' then
      h = redis.call('GET', k[1])
    else
      -- the sender's open questions asked before the answer arrived (an answer sent at once with
      -- a code, or replayed long after, answers none asked later): "YES 47" names one; a bare
      -- YES only when one is open
      local open = {}
      for _, q in ipairs(login_questions(k[1])) do
        if (q.askedAt or 0) <= s.receivedAt then open[#open + 1] = q end
      end
      if s.question ~= '' then
        for _, q in ipairs(open) do
          if q.number == s.question then h = q.pinHash end
        end
      elseif #open == 1 then
        h = open[1].pinHash
      elseif #open > 1 then
        local out = { 'which' }
        for _, q in ipairs(open) do
          out[#out + 1] = q.number
          out[#out + 1] = q.origin
          out[#out + 1] = q.expiresAt
        end
        return nil, out
      end
    end
    if not h then return nil, login_nomatch(s) end
    s.h = h
    -- only these can open a session: the user is found (or its id reserved) before the claim,
    -- so the registration records the user the session belongs to
    if s.mode == 'yes' or (s.mode == 'code' and not s.confirm) then return identity_start(s) end
    -- a code that is asked about: its account is looked up, not linked (a blocked one is refused
    -- before anyone is asked)
    if s.mode == 'code' then
      local nxt = identity_start(s)
      s.peek = true
      return nxt
    end
    return 'reg'
  end,
}

local function login_has_admin(rolesJson)
  local ok, roles = pcall(cjson.decode, rolesJson)
  if not ok or type(roles) ~= 'table' then return false end
  for _, r in ipairs(roles) do
    if r == 'admin' then return true end
  end
  return false
end

-- the account found (not a new one): a blocked account (blockedAt on the user hash, written by
-- block-user.lua) signs no one in; one holding the `admin` role is always asked in the chat,
-- whatever LOGIN_CONFIRMATION says
LOGIN_STEPS.account = {
  keys = function(s) return { { 'user', s.uid } } end,
  run = function(s, k)
    local blockedAt, roles = unpack(redis.call('HMGET', k[1], 'blockedAt', 'roles'))
    s.peek = false
    if blockedAt then s.blocked = true end
    if s.mode == 'code' and roles and login_has_admin(roles) then s.confirm = true end
    return 'reg'
  end,
}

-- the decision, on the registration alone: ask, deny, claim (or resume this job's claim)
LOGIN_STEPS.reg = {
  keys = function(s) return { { 'reg', s.h } } end,
  run = function(s, k)
    local rk, now = k[1], login_now()
    local pinId, expiresAt, state, claimedBy, userId, sessionId, refreshJti, emojiHash, result, origin, askedOf, refusal =
      unpack(redis.call('HMGET', rk, 'pinId', 'expiresAt', 'state', 'messageId', 'userId', 'sessionId', 'refreshJti',
        'emojiHash', 'result', 'origin', 'askedOf', 'refusal'))
    local function done()
      if s.ourSid then return 'done' end
      return nil, { 'done', '0' }
    end
    if not pinId then
      if s.ours then return done() end
      return nil, login_nomatch(s)
    end
    s.pinId, s.x, s.origin, s.regE, s.regPh = pinId, expiresAt, origin or '', emojiHash, askedOf or false
    local fresh = not s.ours and now < tonumber(expiresAt)
    local askedHere = state == 'awaiting' and askedOf == s.addr
    local open = false
    local matched = fresh and s.mode == 'code' and emojiHash == s.emojiHash and (state == 'pending' or askedHere)
    local mine = state == 'denied' and claimedBy == s.msgId
    if (s.blocked and (matched or (fresh and s.mode == 'yes' and askedHere))) or (mine and refusal == 'blocked') then
      -- a blocked account: the registration ends as a NO ends it (the device learns no more than
      -- LOGIN_DENIED), and the person is told in the chat
      if not mine then redis.call('HSET', rk, 'state', 'denied', 'messageId', s.msgId, 'refusal', 'blocked', 'userId', s.uid) end
      s.mark, s.result = s.nonce .. '|' .. s.h, { 'blocked', pinId, s.h, s.origin, userId or s.uid or '' }
      return 'mark'
    end
    if matched then
      if s.confirm then
        -- asked (again, when the code comes once more): YES or NO from this phone decides
        redis.call('HSET', rk, 'state', 'awaiting', 'askedOf', s.addr)
        return 'ask'
      end
      open = true
    elseif fresh and s.mode == 'yes' and askedHere then
      open = true
    elseif (fresh and s.mode == 'no' and askedHere) or (state == 'denied' and claimedBy == s.msgId) then
      redis.call('HSET', rk, 'state', 'denied', 'messageId', s.msgId)
      s.mark, s.result = s.nonce .. '|' .. s.h, { 'denied', pinId, s.h, s.origin }
      return 'mark'
    end
    if open then
      s.sid, s.rj = s.newSid, s.newRefreshJti
      redis.call('HSET', rk, 'state', 'claimed', 'messageId', s.msgId, 'userId', s.uid, 'sessionId', s.sid, 'refreshJti', s.rj)
      -- kept past the PIN's lifetime for the grace period, so the login can be collected
      local keep = math.max(tonumber(expiresAt) - now, s.grace)
      if redis.call('PTTL', rk) < keep then redis.call('PEXPIRE', rk, keep) end
    elseif state == 'claimed' and claimedBy == s.msgId then
      -- this job's claim (a retry): finish it with the ids it stored
      s.uid, s.sid, s.rj = userId, sessionId, refreshJti
    elseif state == 'verified' and claimedBy == s.msgId then
      -- this job's login, stored and not collected: announced again
      return nil, { 'completed', pinId, s.h, result, s.origin }
    elseif s.ours then
      return done()
    else
      return nil, login_nomatch(s)
    end
    s.mark = s.nonce .. '|' .. s.h .. '|' .. s.sid .. '|' .. s.uid
    return 'mark'
  end,
}

-- the chat question, numbered among the sender's open ones ("YES 47" answers it; a bare YES
-- only while it is the one open): the number is drawn at random (s.draw, by the worker) among
-- those not open for this sender, and stays the registration's until the PIN expires
LOGIN_STEPS.ask = {
  keys = function(s) return { { 'confirm', s.addr } } end,
  run = function(s, k)
    local open, taken, n = login_questions(k[1]), {}, nil
    for _, q in ipairs(open) do
      taken[q.number] = true
      if q.pinHash == s.h then n = q.number end
    end
    if not n then
      -- 10..99: the drawn one, or the next one free after it
      for i = 0, 89 do
        local c = tostring(10 + (s.draw + i) % 90)
        if not taken[c] then n = c break end
      end
      if not n then return nil, login_nomatch(s) end
      redis.call('HSET', k[1], n, cjson.encode({ pinHash = s.h, expiresAt = tonumber(s.x), origin = s.origin, askedAt = login_now() }))
    end
    local x = tonumber(s.x)
    if redis.call('PEXPIRETIME', k[1]) < x then redis.call('PEXPIREAT', k[1], x) end
    return nil, { 'ask', s.pinId, s.h, s.x, s.origin, n }
  end,
}

-- the message remembers its claim before anything else is freed, so a retry finds it its own
LOGIN_STEPS.mark = {
  keys = function(s) return { { 'msg', s.msgId } } end,
  run = function(s, k)
    redis.call('SET', k[1], s.mark, 'KEEPTTL')
    return 'freeEmoji'
  end,
}

-- the emoji string is free for new registrations from the moment of the login (or the NO)
LOGIN_STEPS.freeEmoji = {
  keys = function(s) return { { 'emo', s.regE } } end,
  run = function(s, k)
    login_release(k[1], s.h)
    return s.regPh and 'freeQuestion' or 'inactive'
  end,
}

LOGIN_STEPS.freeQuestion = {
  keys = function(s) return { { 'confirm', s.regPh } } end,
  run = function(s, k)
    login_release_question(k[1], s.h)
    return 'inactive'
  end,
}

-- no longer pending: out of the expiry sweep's set
LOGIN_STEPS.inactive = {
  keys = function(s) return { { 'active', s.h } } end,
  run = function(s, k)
    redis.call('ZREM', k[1], s.h)
    if s.result then return nil, s.result end
    return 'user'
  end,
}

-- the user (written if absent) and the session, with the user's session index: one user's tag
LOGIN_STEPS.user = {
  keys = function(s) return { { 'user', s.uid }, { 'usess', s.uid }, { 'sess', s.uid, s.sid } } end,
  run = function(s, k)
    local uk, ik, sk, now = k[1], k[2], k[3], login_now()
    -- blocked since the `account` step (a cluster runs the chain step by step): no session
    if redis.call('HEXISTS', uk, 'blockedAt') == 1 then return 'unclaim' end
    if redis.call('EXISTS', uk) == 0 then
      redis.call('HSET', uk, 'id', s.uid, 'name', s.name, 'surname', s.surname, 'roles', '["user"]', 'createdAt', now)
      -- what the account is linked to (identity steps); the phone only when known
      if s.phone ~= '' then redis.call('HSET', uk, 'phone', s.phone) end
      for _, f in ipairs(s.fields or {}) do redis.call('HSET', uk, f[1], f[2]) end
    end
    -- the WhatsApp username as last seen: shown, never looked up
    if s.uname and s.uname ~= '' then redis.call('HSET', uk, 'username', s.uname) end
    if redis.call('EXISTS', sk) == 0 then
      redis.call('HSET', sk, 'userId', s.uid, 'refreshJti', s.rj, 'createdAt', now, 'lastUsedAt', now, 'origin', s.origin)
      -- the last sign-in, as the admin API's directory shows it (src/accounts/directory.ts)
      redis.call('HSET', uk, 'lastLoginAt', now)
      redis.call('PEXPIRE', sk, s.sessTtl)
      -- the index: expired members trimmed here, the oldest closed past the cap
      redis.call('ZREMRANGEBYSCORE', ik, '-inf', now)
      redis.call('ZADD', ik, now + s.sessTtl, s.sid)
      local over = redis.call('ZCARD', ik) - s.maxSessions
      if over > 0 then
        for _, old in ipairs(redis.call('ZRANGE', ik, 0, over - 1)) do
          redis.call('DEL', string.sub(sk, 1, #sk - #s.sid) .. old)
        end
        redis.call('ZREMRANGEBYRANK', ik, 0, over - 1)
      end
      redis.call('PEXPIRE', ik, s.sessTtl)
    end
    local u = redis.call('HMGET', uk, 'id', 'name', 'surname', 'phone', 'roles', 'createdAt')
    -- then what the identity steps did (a retry that resumes a claim did none of it: it says
    -- `created` too, as the account may be its own first attempt's), the registration's origin
    return nil, { 'claimed', s.pinId, s.h, s.sid, s.rj, u[1] or s.uid, u[2] or '', u[3] or '', u[4] or '', u[5] or '["user"]',
      table.concat(s.linked or {}, ','), s.recycled and '1' or '0', s.conflict and '1' or '0', s.unlink and '1' or '0',
      s.origin or '', u[6] or '', (s.created or s.ours) and '1' or '0' }
  end,
}

-- the account was blocked between its claim and its session: the claim ends as a refusal
LOGIN_STEPS.unclaim = {
  keys = function(s) return { { 'reg', s.h } } end,
  run = function(s, k)
    local state, by = unpack(redis.call('HMGET', k[1], 'state', 'messageId'))
    if state == 'claimed' and by == s.msgId then redis.call('HSET', k[1], 'state', 'denied', 'refusal', 'blocked') end
    return nil, { 'blocked', s.pinId, s.h, s.origin, s.uid }
  end,
}

-- this job's login was collected or cancelled: is the session it opened still open?
LOGIN_STEPS.done = {
  keys = function(s) return { { 'sess', s.ourUid or '', s.ourSid } } end,
  run = function(s, k)
    return nil, { 'done', redis.call('EXISTS', k[1]) == 1 and '1' or '0' }
  end,
}
