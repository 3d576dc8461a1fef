-- Delivery tracking of outbound messages: one hash per outbound job (`<p>:out:<jobId>`) with
-- its status, a timestamp per status reached and the gateway's id for it; an index from the
-- gateway's id on a channel to the job (`<p>:outgw:<channel>:<id>`). Statuses only move
-- forward (queued < sent < delivered < read; failed ends it like read), whatever order the
-- gateway's webhooks arrive in. A status that arrives before the worker recorded the gateway's
-- id (the webhook can beat the send call's answer) waits in `<p>:outst:<channel>:<id>` for it.
--
-- ARGV[1] = 'track': prefix, jobId, status, at (ms), ttl (s), channel, gatewayId ('' none),
--   error ('' none), then field/value pairs to set (owner, kind, channel, ...)
-- ARGV[1] = 'status': prefix, channel, gatewayId, status, at (ms), ttl (s), error ('' none)
-- Returns 'updated', 'stale' (an older status than the one recorded) or 'unknown'.
local mode, p = ARGV[1], ARGV[2]
local RANK = { queued = 0, sent = 1, delivered = 2, read = 3, failed = 3 }

local function apply(k, status, at, err)
  if RANK[status] == nil then return 'stale' end
  local stamp = status .. 'At'
  if redis.call('HEXISTS', k, stamp) == 0 then redis.call('HSET', k, stamp, at) end
  if err ~= '' then redis.call('HSET', k, 'error', err) end
  local cur = redis.call('HGET', k, 'status')
  if cur and RANK[cur] ~= nil and RANK[status] <= RANK[cur] then return 'stale' end
  redis.call('HSET', k, 'status', status, 'updatedAt', at)
  return 'updated'
end

if mode == 'track' then
  local jobId, status, at, ttl, channel, gw, err = ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[9]
  local k = K.out(p, jobId)
  for i = 10, #ARGV - 1, 2 do redis.call('HSET', k, ARGV[i], ARGV[i + 1]) end
  local result = apply(k, status, at, err)
  if gw ~= '' then
    redis.call('HSET', k, 'gatewayId', gw)
    redis.call('SET', K.outgw(p, channel, gw), jobId, 'EX', ttl)
    local pk = K.outst(p, channel, gw)
    for _, e in ipairs(redis.call('LRANGE', pk, 0, -1)) do
      local s, a, e2 = string.match(e, '^([^\n]*)\n([^\n]*)\n(.*)$')
      if s then apply(k, s, a, e2) end
    end
    redis.call('DEL', pk)
  end
  redis.call('EXPIRE', k, ttl)
  return result
end

local channel, gw, status, at, ttl, err = ARGV[3], ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV[8]
local jobId = redis.call('GET', K.outgw(p, channel, gw))
if not jobId then
  local pk = K.outst(p, channel, gw)
  redis.call('RPUSH', pk, status .. '\n' .. at .. '\n' .. err)
  redis.call('LTRIM', pk, -8, -1)
  redis.call('EXPIRE', pk, 600)
  return 'unknown'
end
local k = K.out(p, jobId)
if redis.call('EXISTS', k) == 0 then return 'unknown' end
local result = apply(k, status, at, err)
redis.call('EXPIRE', k, ttl)
return result
