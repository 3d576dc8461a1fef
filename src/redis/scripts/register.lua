-- Register a PIN, atomically with its budgets (lib/budgets.lua). No answer tells a caller that
-- a PIN or an emoji string it does not hold is in use:
-- * a live PIN answers 'existing' only to a request carrying its emoji string (the holder:
--   idempotent re-registration); anyone else gets a 'decoy', shaped exactly like a creation
--   (fresh pinId, full lifetime) but storing nothing, so the registration is untouched;
-- * a client-chosen emoji string already held by another registration is stored anyway and the
--   string becomes contested ('!'): it then matches no chat message until both lifetimes end,
--   so it can't be probed for, nor used to sign the holder into another account;
-- * in 'server' mode the emoji string is drawn by the server (candidates from the caller, the
--   first free one is taken); a client-supplied one is only accepted to re-join.
-- ARGV (after the budgets): prefix, pinHash, emojiHash ('' when omitted), mode (client|server),
--   newPinId, ttlMs, memoryMs, origin (device\nmasked ip, kept for the chat confirmation and
--   the session list), candidate emojiHash…
-- Returns {'limited', waitMs, budgetIndex} | {'refused'} | {'retry'} (every candidate taken) |
--   {outcome, pinId, msLeft, state, expiresAt, candidateIndex}; outcome: created | contested |
--   existing | decoy | denied (the holder's registration was answered NO); candidateIndex: the drawn string's position among the candidates, 0 for
--   the client's own (expiresAt: ms, Redis clock, for the per-second expiry sweep)
local budgets, at = budgets_read()
local p, h, e, mode, newId = ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], ARGV[at + 4]
local ttl, mem = tonumber(ARGV[at + 5]), tonumber(ARGV[at + 6])
local origin = ARGV[at + 7]
local firstCandidate = at + 8

local limited = budgets_take(budgets)
if limited then return limited end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rk = K.reg(p, h)
local ak = K.active_of(p, h)
-- a client's own string in server mode serves only to re-join; a decoy shows a drawn one
local ownIndex = (e ~= '' and mode == 'client') and 0 or 1

local cur = redis.call('HMGET', rk, 'i', 'e', 'x', 's')
if cur[1] then
  local x = tonumber(cur[3])
  local holder = e ~= '' and cur[2] == e
  -- answered NO in the chat: this PIN's registration has ended, it is not started again (said
  -- only to the holder; anyone else gets the decoy below)
  if cur[4] == 'd' and holder then return {'denied', cur[1], 0, 'd', x, 0} end
  -- over: collected ('k', kept only for a retry), failed ('f'), or past its lifetime while
  -- pending or waiting for the person's YES ('c'): replaced below
  local over = cur[4] == 'k' or cur[4] == 'f' or ((cur[4] == 'p' or cur[4] == 'c') and now >= x)
  if not over then
    if holder then return {'existing', cur[1], x - now, cur[4], x, 0} end
    if mode == 'server' and e ~= '' then return {'refused'} end
    return {'decoy', newId, ttl, 'p', now + ttl, ownIndex}
  end
  -- an ended registration of this PIN: replaced below
end
if mode == 'server' and e ~= '' then return {'refused'} end

local x = now + ttl
local outcome, chosen = 'created', 0
if e ~= '' then
  local ek = K.emo(p, e)
  local holder = redis.call('GET', ek)
  if holder and holder ~= h then
    outcome = 'contested'
    local heldUntil = redis.call('PEXPIRETIME', ek)
    redis.call('SET', ek, '!', 'PXAT', math.max(heldUntil, x))
  else
    redis.call('SET', ek, h, 'PXAT', x)
  end
else
  for i = firstCandidate, #ARGV do
    if redis.call('EXISTS', K.emo(p, ARGV[i])) == 0 then
      chosen = i - firstCandidate + 1
      e = ARGV[i]
      break
    end
  end
  if chosen == 0 then return {'retry'} end
  redis.call('SET', K.emo(p, e), h, 'PXAT', x)
end

redis.call('DEL', rk)
redis.call('HSET', rk, 'i', newId, 'e', e, 'x', x, 's', 'p', 'o', origin)
redis.call('PEXPIREAT', rk, x + mem)
-- left to the expiry sweep once due (a trim here would hide it from the sweep's pin-expired)
redis.call('ZADD', ak, x, h)
return {outcome, newId, ttl, 'p', x, chosen}
