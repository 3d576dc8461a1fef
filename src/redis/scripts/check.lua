-- check: check-login on the registration's slot: spend the PIN's own budgets, then answer.
-- A verified result is handed out once; it is kept (state collected) for keepMs after that only so
-- that a retry whose answer was lost gets the same tokens, then it is gone.
-- KEYS[1] registration, KEYS[2..] the PIN's budgets (the registration's tag)
-- ARGV: the PIN's budgets (lib/budgets.lua, all 't': no held points), then keepMs
-- Reply: {'limited', waitMs, index} | {outcome, pinId, result, userId} ('' for none);
--   outcome: not_found | pending | awaiting | denied | failed | expired | verified
--- @include "lib/budgets.lua"
--- @include "lib/now.lua"
local rk = KEYS[1]
local wait, at = budgets_take(KEYS, 2, ARGV, nil)
if wait then return { 'limited', wait, at } end
local keep = tonumber(ARGV[at])

local pinId, expiresAt, state, result, userId = unpack(redis.call('HMGET', rk, 'pinId', 'expiresAt', 'state', 'result', 'userId'))
if not pinId then return { 'not_found', '', '', '' } end
if state == 'verified' then
  if keep > 0 then
    redis.call('HSET', rk, 'state', 'collected')
    redis.call('PEXPIRE', rk, keep)
  else
    redis.call('DEL', rk)
  end
  return { 'verified', pinId, result, userId or '' }
end
if state == 'collected' then return { 'verified', pinId, result, userId or '' } end
-- the login failed for good in the worker (fail-registration)
if state == 'failed' then return { 'failed', pinId, '', '' } end
-- the person answered NO in the chat (remembered like an expiry)
if state == 'denied' then return { 'denied', pinId, '', '' } end
-- awaiting: matched, waiting for the person's YES; claimed: a worker is issuing tokens (pending to the client)
if (state == 'pending' or state == 'awaiting') and now_ms() >= tonumber(expiresAt) then return { 'expired', pinId, '', '' } end
if state == 'awaiting' then return { 'awaiting', pinId, '', '' } end
return { 'pending', pinId, '', '' }
