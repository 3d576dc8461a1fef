-- The per-second expiry sweep: every registration in the active set whose lifetime has ended
-- (score = expiry ms, Redis clock) leaves the set; those still pending are returned so their
-- sockets hear `pin-expired`. Redis' own TTLs already ended them; this only tidies and tells.
-- Bounded: at most `limit` members per call (the caller repeats while `more` is 1).
-- ARGV: prefix, bucket (of the active sets), untilMs (end of the job's second, ms), limit
-- Returns {waitMs, more, pinHash1, pinId1, pinHash2, pinId2, ...}
--   waitMs: ms until untilMs by Redis' clock (> 0: the job fired early, registrations of its
--   second may still be live); more: 1 when the batch was full
local p, bucket, untilMs, limit = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ak = K.active(p, bucket)
local due = redis.call('ZRANGEBYSCORE', ak, '-inf', now, 'LIMIT', 0, limit)
local out = {math.max(0, untilMs - now), (#due == limit) and 1 or 0}
for _, h in ipairs(due) do
  local cur = redis.call('HMGET', K.reg(p, h), 'i', 's', 'x')
  local x = tonumber(cur[3])
  -- 'c' (waiting for the person's answer in the chat) expires like 'p'
  local waiting = cur[2] == 'p' or cur[2] == 'c'
  if waiting and x and x > now then
    -- not due after all (its score lags its hash): keep it, at its real time
    redis.call('ZADD', ak, x, h)
  else
    -- expired, or gone (collected, cancelled, forgotten) or claimed: no longer active
    redis.call('ZREM', ak, h)
    if waiting then
      out[#out + 1] = h
      out[#out + 1] = cur[1]
    end
  end
end
return out
