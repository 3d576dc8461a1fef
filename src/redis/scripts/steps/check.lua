-- Step of check-login on the registration's slot: spend the PIN's own budget, then answer.
-- A verified result is handed out once; it is kept ('k') for keepMs after that only so that a
-- retry whose answer was lost gets the same tokens, then it is gone.
-- KEYS[1] registration, KEYS[2..] the PIN's budgets (the registration's tag)
-- ARGV: budgets (lib/budgets.lua), keepMs
-- Returns {'>', outcome, pinId, result, userId} | {'>', 'limited', waitMs, index}: always '>' so that
-- budget-settle (the wrong-guess budget, on the IP group's slot) runs after it;
-- outcome: not_found | pending | awaiting | denied | failed | expired | verified
local rk = KEYS[1]
-- the PIN's budgets are all 't'
local wait, at = budgets_take(KEYS, 2, ARGV, false)
if wait then return { '>', 'limited', wait, at } end
local keep = tonumber(ARGV[at])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = redis.call('HMGET', rk, 'i', 'x', 's', 'r', 'u')
if not cur[1] then return { '>', 'not_found', '', '' } end
if cur[3] == 'v' then
  if keep > 0 then
    redis.call('HSET', rk, 's', 'k')
    redis.call('PEXPIRE', rk, keep)
  else
    redis.call('DEL', rk)
  end
  return { '>', 'verified', cur[1], cur[4], cur[5] or '' }
end
if cur[3] == 'k' then return { '>', 'verified', cur[1], cur[4], cur[5] or '' } end
-- 'f': the login failed for good in the worker (fail-login)
if cur[3] == 'f' then return { '>', 'failed', cur[1], '' } end
-- 'd': the person answered NO in the chat (remembered like an expiry)
if cur[3] == 'd' then return { '>', 'denied', cur[1], '' } end
-- 'c': matched, waiting for the person's YES; 'm': a worker is issuing tokens (pending to the client)
if (cur[3] == 'p' or cur[3] == 'c') and now >= tonumber(cur[2]) then return { '>', 'expired', cur[1], '' } end
if cur[3] == 'c' then return { '>', 'awaiting', cur[1], '' } end
return { '>', 'pending', cur[1], '' }
