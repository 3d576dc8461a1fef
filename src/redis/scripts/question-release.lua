-- question-release: the chat question about a registration leaves its sender's open questions
-- (the confirm key: a hash of question number → {pinHash, expiresAt, origin, askedAt}, lib/login-steps.lua); the others stay.
-- KEYS[1] the sender's questions; ARGV: pinHash
-- Reply: the number of questions released
local all = redis.call('HGETALL', KEYS[1])
local released = 0
for i = 1, #all, 2 do
  if cjson.decode(all[i + 1]).pinHash == ARGV[1] then released = released + redis.call('HDEL', KEYS[1], all[i]) end
end
return released
