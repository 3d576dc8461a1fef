-- Step of the expiry sweep on one active bucket's slot: which registrations are due?
-- Read only: active-settle decides and removes them after their registrations were read.
-- KEYS[1] active bucket; ARGV: untilMs (end of the job's second, ms), limit
-- Returns {waitMs, more, pinHash1, pinHash2, ...}; waitMs: ms until untilMs by Redis' clock
--   (> 0: the job fired early, registrations of its second may still be live); more: 1 when
--   the batch was full
local untilMs, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)
local out = { math.max(0, untilMs - now), (#due == limit) and 1 or 0 }
for _, h in ipairs(due) do out[#out + 1] = h end
return out
