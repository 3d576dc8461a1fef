-- Cancel a registration (cancel-auth), atomically with its budgets (lib/budgets.lua): a cancel
-- answers "is this PIN pending?" like a check, so a miss spends the wrong-guess budget.
-- Later checks answer PIN_NOT_FOUND. A login made for it and not collected ('m', 'v') has its
-- session closed: nobody can collect its tokens any more.
-- ARGV (after the budgets): prefix, pinHash
-- Returns {'limited', waitMs, budgetIndex} | {outcome, pinId}; outcome: not_found | expired | cancelled
local budgets, at = budgets_read()
local p, h = ARGV[at], ARGV[at + 1]

local limited = budgets_take(budgets)
if limited then return limited end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rk = K.reg(p, h)
local cur = redis.call('HMGET', rk, 'i', 'e', 'x', 's', 'ph', 'd', 'u')
-- 'k': collected (kept only for a lost answer's retry): its session is the client's now
if not cur[1] or cur[4] == 'k' then
  budgets_spend_guess(budgets)
  return {'not_found', ''}
end
if (cur[4] == 'p' or cur[4] == 'c') and now >= tonumber(cur[3]) then return {'expired', cur[1]} end
local ek = K.emo(p, cur[2])
if redis.call('GET', ek) == h then redis.call('DEL', ek) end
-- a question asked in the chat is withdrawn with it (a later YES finds nothing)
if cur[5] and redis.call('GET', K.confirm(p, cur[5])) == h then redis.call('DEL', K.confirm(p, cur[5])) end
-- the claim stores the session id ('d') and its user ('u') together
if (cur[4] == 'm' or cur[4] == 'v') and cur[6] and cur[7] then
  redis.call('DEL', K.sess(p, cur[7], cur[6]), K.rot(p, cur[7], cur[6]))
  redis.call('ZREM', K.usess(p, cur[7]), cur[6])
end
redis.call('ZREM', K.active_of(p, h), h)
redis.call('DEL', rk)
return {'cancelled', cur[1]}
