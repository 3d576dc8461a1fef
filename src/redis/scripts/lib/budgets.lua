-- Budgets: fixed-window rate limits checked and spent inside the step that does the work, so
-- no concurrent request slips between "is there a point left?" and "spend it". Prepended by
-- src/redis/scripts.ts to the steps that use it.
--
-- A step's budgets are some of its KEYS (one slot: an IP group's budgets share the group's
-- tag, a PIN's budget the registration's), described in ARGV: n, then n × (points, windowMs,
-- mode, index). mode 't': spent by every request that passes; 'g' (wrong guess): checked here,
-- and spent by budget-settle once the request turned out to be a wrong guess. When the guess is
-- judged in another call (a cluster: other shard), the point is instead reserved here and given
-- back by budget-settle unless it was a wrong guess, so N concurrent wrong guesses still get at
-- most the budget's worth of answers. index: the budget's place in the request's list (the
-- refusal names it, limits.ts).

-- The budgets are read straight from KEYS and ARGV, never copied into tables: a check-login
-- runs this on every poll, and in Redis's Lua a table per budget cost more than the GETs.

-- The index in argv just after its budgets' description (n, then n × 4 values).
local function budgets_end(argv)
  return 2 + tonumber(argv[1]) * 4
end

-- Milliseconds until the budget has a point again; 0 when it has one now.
local function budget_wait(key, points, window)
  local used = tonumber(redis.call('GET', key) or '0')
  if used < points then return 0 end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    -- a counter without its window (never written so; heal it rather than block for ever)
    redis.call('PEXPIRE', key, window)
    ttl = window
  end
  return ttl
end

-- Spends one point (the window starts with its first point).
local function budget_spend(key, window)
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, window) end
end

-- Checks every budget (keys from `keys[first]` on, described from argv[1]), then spends a point
-- of each 't' one (and of each 'g' one when `reserve`): all or nothing. Returns nil and the
-- index in argv after the budgets when the request may go on, else the wait in ms and the
-- exhausted budget's index.
local function budgets_take(keys, first, argv, reserve)
  local n = tonumber(argv[1])
  for i = 1, n do
    local at = 2 + (i - 1) * 4
    local wait = budget_wait(keys[first + i - 1], tonumber(argv[at]), tonumber(argv[at + 1]))
    if wait > 0 then return wait, tonumber(argv[at + 3]) end
  end
  for i = 1, n do
    local at = 2 + (i - 1) * 4
    if reserve or argv[at + 2] == 't' then budget_spend(keys[first + i - 1], argv[at + 1]) end
  end
  return nil, budgets_end(argv)
end
