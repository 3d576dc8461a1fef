-- Check a login, atomically with its budgets (lib/budgets.lua): the IP group's checks and the
-- PIN's checks are spent, and the IP group's wrong-guess budget is checked first and spent on a
-- miss, so N concurrent wrong guesses get at most the budget's worth of not_found.
-- A verified result is handed out once; it is kept ('k') for keepMs after that only so that a
-- retry whose answer was lost gets the same tokens, then it is gone.
-- ARGV (after the budgets): prefix, pinHash, keepMs
-- Returns {'limited', waitMs, budgetIndex} | {outcome, pinId, result};
-- outcome: not_found | pending | awaiting | denied | failed | expired | verified
local budgets, at = budgets_read()
local p, h, keep = ARGV[at], ARGV[at + 1], tonumber(ARGV[at + 2])

local limited = budgets_take(budgets)
if limited then return limited end

-- The state of the registration, as the client sees it. Extend here for new states.
local function check()
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local rk = K.reg(p, h)
  local cur = redis.call('HMGET', rk, 'i', 'x', 's', 'r')
  if not cur[1] then return {'not_found', '', ''} end
  if cur[3] == 'v' then
    if keep > 0 then
      redis.call('HSET', rk, 's', 'k')
      redis.call('PEXPIRE', rk, keep)
    else
      redis.call('DEL', rk)
    end
    return {'verified', cur[1], cur[4]}
  end
  if cur[3] == 'k' then return {'verified', cur[1], cur[4]} end
  -- 'f': the login failed for good in the worker (fail-login.lua)
  if cur[3] == 'f' then return {'failed', cur[1], ''} end
  -- 'd': the person answered NO in the chat (remembered like an expiry)
  if cur[3] == 'd' then return {'denied', cur[1], ''} end
  -- 'c': matched, waiting for the person's YES; 'm': a worker is issuing tokens (pending to the client)
  if (cur[3] == 'p' or cur[3] == 'c') and now >= tonumber(cur[2]) then return {'expired', cur[1], ''} end
  if cur[3] == 'c' then return {'awaiting', cur[1], ''} end
  return {'pending', cur[1], ''}
end

local out = check()
if out[1] == 'not_found' then budgets_spend_guess(budgets) end
return out
