-- Step of fail-login on the message's slot: which registration did this job claim?
-- KEYS[1] the message's de-duplication record (nonce|pinHash|sid|userId, claim-login.lua)
-- ARGV: nonce
-- Returns {pinHash, sid, userId} ('' for none) | {} when this job claimed nothing
local seen = redis.call('GET', KEYS[1])
if not seen then return {} end
local parts = {}
for part in string.gmatch(seen, '[^|]+') do parts[#parts + 1] = part end
-- never claimed, or claimed by another delivery of the message
if parts[1] ~= ARGV[1] or not parts[2] then return {} end
return { parts[2], parts[3] or '', parts[4] or '' }
