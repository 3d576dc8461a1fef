-- active-settle: the expiry sweep on the active bucket's slot: every due registration read by
-- reg-peek leaves the bucket; those still waiting for a login are returned so their sockets
-- hear `pin-expired`. Redis' own TTLs already ended them; this only tidies and tells. Only the
-- call that removes an entry returns it, so sweeps racing each other announce each PIN once,
-- and a sweep that died before this step left the bucket as it was for the next one.
-- KEYS[1] active bucket; ARGV: (pinHash, pinId, state, expiresAt) × n, from reg-peek
-- Reply: {pinHash1, pinId1, pinHash2, pinId2, ...}
--- @include "lib/now.lua"
local now = now_ms()
local out = {}
for i = 1, #ARGV - 3, 4 do
  local h, id, s, x = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 3])
  -- awaiting the person's answer in the chat expires like pending
  local waiting = s == 'pending' or s == 'awaiting'
  local score = tonumber(redis.call('ZSCORE', KEYS[1], h))
  if score and score > now then
    -- registered again since it was read (reg-peek is a call of its own): its
    -- new entry stays for its own sweep
  elseif waiting and x and x > now then
    -- not due after all (its score lags its hash): keep it, at its real time
    redis.call('ZADD', KEYS[1], x, h)
  elseif redis.call('ZREM', KEYS[1], h) == 1 and waiting then
    -- expired, or gone (collected, cancelled, forgotten) or claimed: no longer active
    out[#out + 1] = h
    out[#out + 1] = id
  end
end
return out
