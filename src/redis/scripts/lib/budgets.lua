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

-- Gives back a point spent by this call (a counter it started goes, as if never spent).
local function budget_unspend(key)
  if redis.call('DECR', key) <= 0 then redis.call('DEL', key) end
end

-- Whether budget i of argv is spent now: every 't' one, and each 'g' one when `reserve`.
local function budget_spent(argv, i, reserve)
  return reserve or argv[i * 4] == 't'
end

-- Checks every budget (keys from `keys[first]` on, described from argv[1]) and spends a point
-- of each spent one (budget_spent): all or nothing. A spent budget is counted first and given
-- back when that took it past its points (one INCR where a GET and an INCR were: a polled
-- check runs this on every request, and its two calls fewer are a tenth of its script's time);
-- a budget only checked is read. Returns nil and the index in argv after the budgets when the
-- request may go on, else the wait in ms and the exhausted budget's index.
local function budgets_take(keys, first, argv, reserve)
  local n = tonumber(argv[1])
  for i = 1, n do
    local at = 2 + (i - 1) * 4
    local key, points, window = keys[first + i - 1], tonumber(argv[at]), argv[at + 1]
    local over
    if budget_spent(argv, i, reserve) then
      local used = redis.call('INCR', key)
      if used == 1 then redis.call('PEXPIRE', key, window) end
      over = used > points
      if over then budget_unspend(key) end
    else
      over = tonumber(redis.call('GET', key) or '0') >= points
    end
    if over then
      for j = 1, i - 1 do
        if budget_spent(argv, j, reserve) then budget_unspend(keys[first + j - 1]) end
      end
      return budget_wait(key, tonumber(window)), tonumber(argv[at + 3])
    end
  end
  return nil, budgets_end(argv)
end
