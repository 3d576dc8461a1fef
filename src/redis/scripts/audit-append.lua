-- audit-append: events into the audit trail (src/accounts/audit.ts), each also into the index of
-- every person it names, both kept to the retentions (exact trims: each call removes the few
-- entries that just aged out); the indexes expire with the window when their person has no
-- newer event. All keys on the trail's slot (keys.ts `audit`, `auditOfUser`).
-- KEYS: the stream, then the indexes the events name
-- ARGV: maxEvents, windowMs, eventsJson: [{ f: [field, value, ...], p: [KEYS position, ...] }, ...]
-- Reply: the events' stream ids, in order
--- @include "lib/now.lua"
local stream, max, window = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
-- index members sort as stream ids do: time and sequence zero-padded (all scores 0, lexical order)
local function member(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return string.rep('0', 16 - #ms) .. ms .. '-' .. string.rep('0', 10 - #seq) .. seq
end
local horizon = now_ms() - window
local ids, named = {}, {}
for i, e in ipairs(cjson.decode(ARGV[3])) do
  local id = redis.call('XADD', stream, 'MAXLEN', max, '*', unpack(e.f))
  ids[i] = id
  for _, at in ipairs(e.p) do
    redis.call('ZADD', KEYS[at], 0, member(id))
    named[at] = true
  end
end
redis.call('XTRIM', stream, 'MINID', horizon)
for at in pairs(named) do
  local idx = KEYS[at]
  redis.call('ZREMRANGEBYLEX', idx, '-', '(' .. member(horizon .. '-0'))
  redis.call('ZREMRANGEBYRANK', idx, 0, -(max + 1))
  redis.call('PEXPIRE', idx, window)
end
return ids
