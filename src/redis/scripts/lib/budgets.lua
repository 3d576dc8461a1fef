-- Budgets: fixed-window rate limits checked and spent inside the script that does the work, so
-- no concurrent request slips between "is there a point left?" and "spend it". Included by the
-- scripts that use it (`--- @include "lib/budgets.lua"`, expanded by src/redis/scripts.ts).
--
-- A script's budgets are some of its KEYS (one slot: an IP group's budgets share the group's
-- tag, a PIN's budgets the registration's), described in ARGV: n, then n × (points, windowMs,
-- mode, index). mode 't': spent by every request that passes. mode 'g' (wrong guess): the guess
-- is judged by a later call (check, cancel-find), so the point is held for it here and
-- budget-settle keeps it on a wrong guess or gives it back. A 'g' budget has a second key after
-- the budgets, its held points (in flight): a request that would take the budget past its
-- points while some are held is told 'busy' and asks again once they are settled, so N
-- concurrent wrong guesses get at most the budget's worth of answers, and right ones are not
-- refused for guesses still in flight. index: the budget's place in the request's list (the
-- refusal names it, limits.ts).

-- How long held points are kept when a request dies before budget-settle: then they count as
-- spent until the budget's window ends.
local BUDGET_HOLD_MS = 10000

-- The index in argv just after its budgets' description (n, then n × 4 values).
local function budgets_end(argv)
  return 2 + tonumber(argv[1]) * 4
end

-- Milliseconds until the exhausted budget at `key` has a point again.
local function budget_wait(key, window)
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    -- a counter without its window (never written so; heal it rather than block for ever)
    redis.call('PEXPIRE', key, window)
    ttl = window
  end
  return ttl
end

-- Gives back a point spent or held by this call (a counter at 0 goes, as if never spent).
local function budget_unspend(key)
  if redis.call('EXISTS', key) == 1 and redis.call('DECR', key) <= 0 then redis.call('DEL', key) end
end

-- Spends (or, 'g', holds) a point of every budget: keys from `keys[first]` on, described from
-- argv[1], the held-points keys of the 'g' ones from `keys[held]` on. All or nothing: a refusal
-- gives back what this call took. Returns nil and the index in argv after the budgets when the
-- request may go on; 'busy' and the budget's index when held points are in the way; else the
-- wait in ms and the exhausted budget's index.
local function budgets_take(keys, first, argv, held)
  local n = tonumber(argv[1])
  local h = held
  local taken = {}
  for i = 1, n do
    local at = 2 + (i - 1) * 4
    local key, points, window, mode = keys[first + i - 1], tonumber(argv[at]), argv[at + 1], argv[at + 2]
    local hk, refusal
    if mode == 'g' then
      hk, h = keys[h], h + 1
      local used = tonumber(redis.call('GET', key) or '0')
      local inflight = tonumber(redis.call('GET', hk) or '0')
      if used - inflight >= points then
        refusal = 'limited'
      elseif used >= points then
        refusal = 'busy'
      else
        if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, window) end
        redis.call('INCR', hk)
        redis.call('PEXPIRE', hk, BUDGET_HOLD_MS)
      end
    else
      -- counted first and given back when that took it past its points (one INCR, not GET + INCR)
      local used = redis.call('INCR', key)
      if used == 1 then redis.call('PEXPIRE', key, window) end
      if used > points then
        budget_unspend(key)
        refusal = 'limited'
      end
    end
    if refusal then
      for _, t in ipairs(taken) do
        budget_unspend(t[1])
        if t[2] then budget_unspend(t[2]) end
      end
      if refusal == 'busy' then return 'busy', tonumber(argv[at + 3]) end
      return budget_wait(key, tonumber(window)), tonumber(argv[at + 3])
    end
    taken[#taken + 1] = { key, hk }
  end
  return nil, budgets_end(argv)
end
