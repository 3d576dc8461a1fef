-- register: register-pin on the registration's slot, called twice by one request: 'read'
-- decides before anything is written, 'write' decides again (a concurrent request may have
-- created it meanwhile) and creates, after emoji-hold and active-add (registrations/flows.ts).
-- No answer tells a caller that a PIN or an emoji string it does not hold is in use:
-- * a live PIN answers 'existing' only to a request carrying its emoji string (the holder:
--   idempotent re-registration); anyone else gets a 'decoy', shaped exactly like a creation
--   (fresh pinId, full lifetime) but storing nothing, so the registration is untouched. The
--   request still makes every call a creation makes (emoji-hold holds nothing for it, active-add
--   counts it as a creation would, so activePins moves alike), and 'write' answers it without
--   writing;
-- * a client-chosen emoji string held by another registration is stored anyway and the string
--   becomes contested (emoji-hold): it then matches no chat message until both lifetimes end,
--   so it can't be probed for, nor used to sign the holder into another account;
-- * in 'server' mode the emoji string is drawn by the server (emoji-hold takes the first free
--   candidate); a client-supplied one is only accepted to re-join.
-- * a retry of an attempt with an Idempotency-Key (no emoji string): its candidates are derived
--   from the PIN and the key (registrations/pin.ts), so the registration holding one of them is
--   the attempt's own and answers 'existing' with that candidate; a decoy answered to a keyed
--   attempt is remembered for its lifetime (KEYS[2]), so its repeat answers as a retry would
--   ('again': same pinId, seconds left) and tells nothing a real retry would not.
-- KEYS[1] registration; KEYS[2] (keyed attempts only) the attempt's decoy memory, same slot
-- ARGV: phase (read | write), emojiHash ('' when omitted), mode (client | server), newPinId,
--   ttlMs, memoryMs, origin (device\nmasked ip, for the chat confirmation and the session
--   list), retry (the keyed attempt's candidate hashes, space-separated, in order; '' without a
--   key); write only: expiresAt, outcome (created | contested | decoy, from read and
--   emoji-hold), candidateIndex (0: the client's own string), emojiHash held
-- Reply: {'refused'}
--   | {'answer', outcome, pinId, msLeft, state, expiresAt, candidateIndex}, outcome one of
--     existing | decoy | again | denied | created | contested
--   | read only: {'create', expiresAt} (go on: hold an emoji string) | {'decoy', expiresAt}
--- @include "lib/now.lua"
local rk = KEYS[1]
local phase, e, mode, newId = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local ttl, mem, origin, retry = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7], ARGV[8]

-- 'read' decided on a decoy: nothing is written, whatever happened since
if phase == 'write' and ARGV[10] == 'decoy' then return { 'answer', 'decoy', newId, ttl, 'pending', tonumber(ARGV[9]), tonumber(ARGV[11]) } end

local now = now_ms()
-- a client's own string in server mode serves only to re-join; a decoy shows a drawn one
local ownIndex = (e ~= '' and mode == 'client') and 0 or 1

-- the place of `hash` among the keyed attempt's candidates (1-based), or 0
local function retried(hash)
  if retry == '' or not hash then return 0 end
  local i = 0
  for h in string.gmatch(retry, '%S+') do
    i = i + 1
    if h == hash then return i end
  end
  return 0
end

-- a decoy: nothing stored but the keyed attempt's memory of it
local function decoy()
  local dk = KEYS[2]
  if dk then
    local seen = redis.call('GET', dk)
    if seen then
      local dx, did = string.match(seen, '^(%d+)|(.+)$')
      dx = tonumber(dx)
      if dx > now then return { 'answer', 'again', did, dx - now, 'pending', dx, ownIndex } end
    end
    redis.call('SET', dk, (now + ttl) .. '|' .. newId, 'PXAT', now + ttl)
  end
  if phase == 'read' then return { 'decoy', now + ttl } end
  return { 'answer', 'decoy', newId, ttl, 'pending', now + ttl, ownIndex }
end

local pinId, heldHash, expiresAt, state = unpack(redis.call('HMGET', rk, 'pinId', 'emojiHash', 'expiresAt', 'state'))
if pinId then
  local x = tonumber(expiresAt)
  local mine = retried(heldHash)
  local holder = (e ~= '' and heldHash == e) or mine > 0
  -- answered NO in the chat: this PIN's registration has ended, it is not started again (said
  -- only to the holder; anyone else gets a decoy)
  if state == 'denied' and holder then return { 'answer', 'denied', pinId, 0, state, x, 0 } end
  -- over: collected (kept only for a retry), failed, or past its lifetime while pending or
  -- awaiting the person's YES: replaced below
  local over = state == 'collected' or state == 'failed' or ((state == 'pending' or state == 'awaiting') and now >= x)
  if not over then
    if holder then return { 'answer', 'existing', pinId, x - now, state, x, mine } end
    if mode == 'server' and e ~= '' then return { 'refused' } end
    return decoy()
  end
end
if mode == 'server' and e ~= '' then return { 'refused' } end
if phase == 'read' then return { 'create', now + ttl } end

-- write: the registration 'read' decided on, with the emoji string emoji-hold held
local x, outcome, chosen, held = tonumber(ARGV[9]), ARGV[10], tonumber(ARGV[11]), ARGV[12]
redis.call('DEL', rk)
redis.call('HSET', rk, 'pinId', newId, 'emojiHash', held, 'expiresAt', x, 'state', 'pending', 'origin', origin)
redis.call('PEXPIREAT', rk, x + mem)
return { 'answer', outcome, newId, ttl, 'pending', x, chosen }
