-- active-due: the expiry sweep on one active bucket's slot: which registrations are due?
-- Read only: active-settle decides and removes them after their registrations were read.
-- KEYS[1] active bucket; ARGV: untilMs (end of the job's second, ms), limit
-- Reply: {waitMs, more, pinHash1, pinHash2, ...}; waitMs: ms until untilMs by Redis' clock
--   (> 0: the job fired early, registrations of its second may still be live); more: 1 when
--   the batch was full
--- @include "lib/now.lua"
local untilMs, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)
local out = { math.max(0, untilMs - now), (#due == limit) and 1 or 0 }
for _, h in ipairs(due) do out[#out + 1] = h end
return out
