-- delivery-apply: delivery tracking on the outbound job's slot: one hash per outbound job with its
-- status, a timestamp per status reached and the gateway's id for it. Statuses only move
-- forward (queued < sent < delivered < read; failed ends it like read), whatever order the
-- gateway's webhooks arrive in, so applying one twice changes nothing (a retried call).
-- KEYS[1] the job's delivery record
-- ARGV: create ('1': the worker tracks its job | '0': a gateway's status, for a known job
--   only), status, at (ms), ttl (s), error ('' none), gatewayId ('' none), n, n field/value
--   pairs to set (owner, kind, channel, ...), then early statuses ('status\nat\nerror', from
--   delivery-link)
-- Reply: 'updated' | 'stale' (older than the one recorded) | 'unknown'
local k = KEYS[1]
local create, status, at, ttl, err, gw = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
local n = tonumber(ARGV[7])
local RANK = { queued = 0, sent = 1, delivered = 2, read = 3, failed = 3 }

local function apply(s, a, e)
  if RANK[s] == nil then return 'stale' end
  local stamp = s .. 'At'
  if redis.call('HEXISTS', k, stamp) == 0 then redis.call('HSET', k, stamp, a) end
  if e ~= '' then redis.call('HSET', k, 'error', e) end
  local cur = redis.call('HGET', k, 'status')
  if cur and RANK[cur] ~= nil and RANK[s] <= RANK[cur] then return 'stale' end
  redis.call('HSET', k, 'status', s, 'updatedAt', a)
  return 'updated'
end

if create ~= '1' and redis.call('EXISTS', k) == 0 then return 'unknown' end
for i = 8, 7 + 2 * n, 2 do redis.call('HSET', k, ARGV[i], ARGV[i + 1]) end
local result = apply(status, at, err)
if gw ~= '' then redis.call('HSET', k, 'gatewayId', gw) end
for i = 8 + 2 * n, #ARGV do
  local s, a, e = string.match(ARGV[i], '^([^\n]*)\n([^\n]*)\n(.*)$')
  if s then apply(s, a, e) end
end
redis.call('EXPIRE', k, ttl)
return result
