-- Budgets: fixed-window rate limits checked and spent inside the script that does the work,
-- so no concurrent request slips between "is there a point left?" and "spend it", and a
-- request costs one round trip. Prepended by src/redis/scripts.ts to the scripts that use it.
--
-- A script's ARGV starts with its budgets: ARGV[1] = n, then n × (key, points, windowMs, mode).
-- mode 't' (take): spent by every request that passes; 'g' (guess): only checked here, and
-- spent by the script when the attempt turns out to be a wrong guess (budget_spend).

-- Returns the budgets and the index in ARGV where the script's own arguments begin.
local function budgets_read()
  local n = tonumber(ARGV[1])
  local list = {}
  for i = 1, n do
    local at = 2 + (i - 1) * 4
    list[i] = { key = ARGV[at], points = tonumber(ARGV[at + 1]), window = tonumber(ARGV[at + 2]), mode = ARGV[at + 3] }
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

-- Spends one point (the window starts with the first point); returns the points used.
local function budget_spend(b)
  local used = redis.call('INCR', b.key)
  if used == 1 then redis.call('PEXPIRE', b.key, b.window) end
  return used
end

-- Checks every budget, then spends the 't' ones: all or nothing. Returns nil when the request
-- may go on, else {'limited', waitMs, index of the exhausted budget}.
local function budgets_take(list)
  for i, b in ipairs(list) do
    local wait = budget_wait(b)
    if wait > 0 then return { 'limited', wait, i } end
  end
  for _, b in ipairs(list) do
    if b.mode == 't' then budget_spend(b) end
  end
  return nil
end

-- Spends a point of every 'g' budget (a wrong guess).
local function budgets_spend_guess(list)
  for _, b in ipairs(list) do
    if b.mode == 'g' then budget_spend(b) end
  end
end

