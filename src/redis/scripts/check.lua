-- check: check-login on the registration's slot: spend the PIN's own budgets, then answer.
-- A verified result is handed out once; it is kept ('collected') for keepMs after that only so
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

local cur = redis.call('HMGET', rk, 'i', 'x', 's', 'r', 'u')
if not cur[1] then return { 'not_found', '', '', '' } end
if cur[3] == 'v' then
  if keep > 0 then
    redis.call('HSET', rk, 's', 'k')
    redis.call('PEXPIRE', rk, keep)
  else
    redis.call('DEL', rk)
  end
  return { 'verified', cur[1], cur[4], cur[5] or '' }
end
if cur[3] == 'k' then return { 'verified', cur[1], cur[4], cur[5] or '' } end
-- 'f': the login failed for good in the worker (fail-registration)
if cur[3] == 'f' then return { 'failed', cur[1], '', '' } end
-- 'd': the person answered NO in the chat (remembered like an expiry)
if cur[3] == 'd' then return { 'denied', cur[1], '', '' } end
-- 'c': matched, waiting for the person's YES; 'm': a worker is issuing tokens (pending to the client)
if (cur[3] == 'p' or cur[3] == 'c') and now_ms() >= tonumber(cur[2]) then return { 'expired', cur[1], '', '' } end
if cur[3] == 'c' then return { 'awaiting', cur[1], '', '' } end
return { 'pending', cur[1], '', '' }
