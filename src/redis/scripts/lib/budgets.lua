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

-- Returns the budgets (keys from `keys[first]` on) and the index in argv after them.
local function budgets_read(keys, argv, first)
  local n = tonumber(argv[1])
  local list = {}
  for i = 1, n do
    local at = 2 + (i - 1) * 4
    list[i] = { key = keys[first + i - 1], points = tonumber(argv[at]), window = tonumber(argv[at + 1]), mode = argv[at + 2], index = tonumber(argv[at + 3]) }
  end
  return list, 2 + n * 4
end

-- Milliseconds until the budget has a point again; 0 when it has one now.
local function budget_wait(b)
  local used = tonumber(redis.call('GET', b.key) or '0')
  if used < b.points then return 0 end
  local ttl = redis.call('PTTL', b.key)
  if ttl < 0 then
    -- a counter without its window (never written so; heal it rather than block for ever)
    redis.call('PEXPIRE', b.key, b.window)
    ttl = b.window
  end
  return ttl
end

-- Spends one point (the window starts with its first point).
local function budget_spend(key, window)
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, window) end
end

-- Checks every budget, then spends a point of each 't' one (and of each 'g' one when
-- `reserve`): all or nothing. Returns nil when the request may go on, else {'limited', waitMs,
-- index of the exhausted budget}.
local function budgets_take(list, reserve)
  for _, b in ipairs(list) do
    local wait = budget_wait(b)
    if wait > 0 then return { 'limited', wait, b.index } end
  end
  for _, b in ipairs(list) do
    if b.mode == 't' or reserve then budget_spend(b.key, b.window) end
  end
  return nil
end
