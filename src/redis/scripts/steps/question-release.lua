-- Step: the chat question about a registration leaves its sender's open questions (the confirm
-- key: a hash of question number → {h, x, o}, login-steps.lua); the others stay.
-- KEYS[1] the sender's questions; ARGV: pinHash, then the carry of the steps before (passed on)
-- Returns {'>', carry...}
if redis.call('TYPE', KEYS[1]).ok == 'string' then redis.call('DEL', KEYS[1]) end
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if cjson.decode(all[i + 1]).h == ARGV[1] then redis.call('HDEL', KEYS[1], all[i]) end
end
return { '>', unpack(ARGV, 2) }
