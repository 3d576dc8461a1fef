-- The account of a chat message's sender, found by the identifiers it carries (docs/identity.md):
-- steps of the login chain, included by claim-login.lua before lib/login-steps.lua, which
-- adds ID_STEPS to its steps and enters them by identity_start.
--
-- s.ids lists the message's identifiers as {kind, value}, stable ones first (a Cloud BSUID, a
-- WhatsApp LID, another channel's user id), the phone last; each identifier's key (kind
-- `ident`: keys.ts `identity`) names the one account it is linked to. The steps read every
-- key, decide, then link what is not yet linked, each write a compare-and-set on its own key
-- (one slot each): on one server the chain is one script and nothing can interleave; on a
-- cluster a write that finds its key changed since it was read starts the reading again.
--
-- The decision: a stable identifier's account wins; else the phone's account, unless that
-- account is linked to another identifier of a stable kind the message carries (a recycled
-- number: the new holder gets a new account, and the phone moves to it); else a new account.
-- A phone that reaches an account from another account moves (the old record forgets it), and
-- an account that gets a new phone lets the old one go. A stable identifier linked to another
-- account is never taken over (conflict, logged).
-- mode 'renumber' (a `user_changed_number` or `user_changed_user_id`): s.ids holds the old stable
-- ids, the old phone (when the gateway names it), and what the change gives, marked 'new': the
-- new phone {'phone', new, 'new'} and a new stable id {'bsuid', new, 'new'}. The old ids find the
-- account; the account moves from its old phone to the new one and links the new stable id (the
-- old one stays linked: a stable id is never given to someone else). A change whose new stable id
-- is another account's, or whose old number's account is another person's, moves nothing
-- (conflict).
-- s.peek: the decision only (its reads), for a code that is asked about before it signs in: the
-- account found is the one whose standing decides (blocked, admin); nothing is linked.

local ID_MAX_RESTARTS = 3
local ID_STEPS = {}

local function id_is_stable(id) return id[1] ~= 'phone' end
local function id_is_new(id) return id[3] == 'new' end
local function id_is_new_phone(id) return id[1] == 'phone' and id_is_new(id) end
-- a stable id the message is known by (not one a change gives)
local function id_is_known_stable(id) return id_is_stable(id) and not id_is_new(id) end

local function id_has_new_phone(s)
  for _, id in ipairs(s.ids) do
    if id_is_new_phone(id) then return true end
  end
  return false
end

-- a renumber that moves nothing: {'renumbered', userId, changed, linkedKinds, conflict}
local function id_unmoved(conflict) return nil, { 'renumbered', '', '0', '', conflict and '1' or '0' } end

local function id_phone_index(s)
  for i, id in ipairs(s.ids) do
    if id[1] == 'phone' and not id_is_new_phone(id) then return i end
  end
  return nil
end

local function id_reset(s)
  s.ii, s.found = 1, {}
  s.links, s.li, s.moveFrom, s.created, s.recycled, s.conflict = {}, 1, false, false, false, false
  s.fields, s.unlink, s.linked, s.check = {}, false, {}, false
end

-- the first identity step (from `msg` or `lookup`)
local function identity_start(s)
  id_reset(s)
  s.restarts = s.restarts or 0
  return 'idget'
end

-- after the account is known and linked: a login goes on to the account's standing (blocked?
-- an admin?: login-steps.lua, `account`), then the registration; a new account has none
local function identity_done(s)
  if s.mode == 'renumber' then
    return nil, { 'renumbered', s.uid or '', #s.linked > 0 and '1' or '0', table.concat(s.linked, ','), '0' }
  end
  return s.created and 'reg' or 'account'
end

local identity_plan

local function identity_decide(s)
  local pi = id_phone_index(s)
  local su = false
  for i, id in ipairs(s.ids) do
    if id_is_known_stable(id) and s.found[i] ~= '' and not su then su = s.found[i] end
  end
  local pu = pi and s.found[pi] ~= '' and s.found[pi] or false
  local stable = false
  for _, id in ipairs(s.ids) do if id_is_known_stable(id) then stable = true end end
  if su then
    s.uid = su
  elseif pu then
    s.uid = pu
    -- the phone's account may belong to someone else: its stable ids decide (`idowner`)
    if stable then
      s.check = pu
      return 'idowner'
    end
  elseif s.mode == 'renumber' then
    -- nobody we know: nothing to move
    return id_unmoved(false)
  else
    s.uid, s.created = s.newUid, true
  end
  return identity_plan(s)
end

-- what to write: each identifier not yet on the account, with the value its key had when read.
-- s.peek (a code that is asked about, login-steps.lua `lookup`): the account is only looked up,
-- nothing is written (the YES links it); a new account has no standing to read
identity_plan = function(s)
  if s.peek then return s.created and 'reg' or 'account' end
  local pi = id_phone_index(s)
  s.links, s.fields = {}, {}
  for i, id in ipairs(s.ids) do
    local f = s.found[i]
    if s.mode == 'renumber' and i == pi then
      -- the old number lets go of the account (a BSUID change keeps the number)
      if f == s.uid and id_has_new_phone(s) then s.links[#s.links + 1] = { id[1], id[2], f, '' } end
    elseif s.mode == 'renumber' and id_is_new(id) and id_is_stable(id) and f ~= '' and f ~= s.uid then
      -- the new id is another account's: move nothing (nothing is written before `idset`)
      return id_unmoved(true)
    elseif f == s.uid then
      if id_is_stable(id) then s.fields[#s.fields + 1] = { 'id:' .. id[1], id[2] } end
    elseif id_is_stable(id) and f ~= '' then
      s.conflict = true
    else
      s.links[#s.links + 1] = { id[1], id[2], f, s.uid }
      s.linked[#s.linked + 1] = id[1]
      if id_is_stable(id) then s.fields[#s.fields + 1] = { 'id:' .. id[1], id[2] } end
      if id[1] == 'phone' and f ~= '' and f ~= s.uid then s.moveFrom = f end
    end
  end
  s.li = 1
  if #s.links > 0 then return 'idset' end
  -- nothing changed: the record already shows it (a login's `user` step writes the username)
  return identity_done(s)
end

-- read each identifier's key
ID_STEPS.idget = {
  keys = function(s) local id = s.ids[s.ii]; return { { 'ident', id[1], id[2] } } end,
  run = function(s, k)
    s.found[s.ii] = redis.call('GET', k[1]) or ''
    s.ii = s.ii + 1
    if s.ii <= #s.ids then return 'idget' end
    return identity_decide(s)
  end,
}

-- the phone's account: linked to another identifier of a kind this message carries? Then the
-- number was recycled (or changed hands): the sender is not that account's person
ID_STEPS.idowner = {
  keys = function(s) return { { 'user', s.check } } end,
  run = function(s, k)
    for _, id in ipairs(s.ids) do
      if id_is_known_stable(id) then
        local had = redis.call('HGET', k[1], 'id:' .. id[1])
        if had and had ~= id[2] then
          -- a change of someone else than that account's person: nothing to move
          if s.mode == 'renumber' then return id_unmoved(true) end
          s.uid, s.created, s.recycled = s.newUid, true, true
        end
      end
    end
    return identity_plan(s)
  end,
}

-- link (or unlink) one identifier, if its key still holds what was read; else read again
ID_STEPS.idset = {
  keys = function(s) local l = s.links[s.li]; return { { 'ident', l[1], l[2] } } end,
  run = function(s, k)
    local l = s.links[s.li]
    local cur = redis.call('GET', k[1]) or ''
    if cur ~= l[3] and cur ~= l[4] then
      s.restarts = s.restarts + 1
      if s.restarts > ID_MAX_RESTARTS then return nil, { 'busy' } end
      return identity_start(s)
    end
    if l[4] == '' then redis.call('DEL', k[1]) else redis.call('SET', k[1], l[4]) end
    s.li = s.li + 1
    if s.li <= #s.links then return 'idset' end
    if s.moveFrom then return 'idprev' end
    return s.created and identity_done(s) or 'idmine'
  end,
}

-- the account the phone moved from no longer shows it
ID_STEPS.idprev = {
  keys = function(s) return { { 'user', s.moveFrom } } end,
  run = function(s, k)
    local pi = id_phone_index(s)
    local moved = s.ids[pi] and s.ids[pi][2]
    for _, id in ipairs(s.ids) do if id_is_new_phone(id) then moved = id[2] end end
    if moved and redis.call('HGET', k[1], 'phone') == moved then redis.call('HDEL', k[1], 'phone') end
    return s.created and identity_done(s) or 'idmine'
  end,
}

-- an existing account's record shows what was linked to it; a new phone lets the old one go
ID_STEPS.idmine = {
  keys = function(s) return { { 'user', s.uid } } end,
  run = function(s, k)
    -- a record not written yet (its first login's claim failed) is written whole by `user`
    if redis.call('EXISTS', k[1]) == 0 then return identity_done(s) end
    for _, f in ipairs(s.fields) do redis.call('HSET', k[1], f[1], f[2]) end
    local phone = s.phone
    if s.mode == 'renumber' then
      for _, id in ipairs(s.ids) do if id_is_new_phone(id) then phone = id[2] end end
    end
    if phone ~= '' then
      local old = redis.call('HGET', k[1], 'phone')
      redis.call('HSET', k[1], 'phone', phone)
      if old and old ~= phone then
        s.unlink = old
        return 'idunlink'
      end
    end
    return identity_done(s)
  end,
}

-- the account's previous number, if it still points here
ID_STEPS.idunlink = {
  keys = function(s) return { { 'ident', 'phone', s.unlink } } end,
  run = function(s, k)
    if redis.call('GET', k[1]) == s.uid then redis.call('DEL', k[1]) end
    return identity_done(s)
  end,
}
