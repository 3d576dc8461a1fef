-- Redis' clock in milliseconds (every node and script agrees on it, not on the callers' clocks).
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
