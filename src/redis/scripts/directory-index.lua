-- directory-index: put one person in the directory (src/accounts/directory.ts), or take them out:
-- their creation time in the creation index, and their name entries (`<folded name>\0<id>`) in
-- the name index, replacing the entries written before (a rename, or a record read again).
-- Idempotent: the same call twice leaves the same keys. All on the directory's slot (`{d}`).
-- KEYS: the creation index, the name index, the entries hash
-- ARGV: userId, createdAt (ms; '' = take the person out), then the new name entries
-- Reply: the number of name entries the person has now
local created, names, entries = KEYS[1], KEYS[2], KEYS[3]
local uid, at = ARGV[1], ARGV[2]
local old = redis.call('HGET', entries, uid)
if old then
  local ok, list = pcall(cjson.decode, old)
  if ok and type(list) == 'table' then
    for _, e in ipairs(list) do redis.call('ZREM', names, e) end
  end
end
if at == '' then
  redis.call('ZREM', created, uid)
  redis.call('HDEL', entries, uid)
  return 0
end
redis.call('ZADD', created, tonumber(at), uid)
local fresh = {}
for i = 3, #ARGV do
  redis.call('ZADD', names, 0, ARGV[i])
  fresh[#fresh + 1] = ARGV[i]
end
if #fresh > 0 then
  redis.call('HSET', entries, uid, cjson.encode(fresh))
else
  redis.call('HDEL', entries, uid)
end
return #fresh
