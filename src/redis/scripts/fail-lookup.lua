-- fail-lookup: fail-login on the message's slot: which registration did this job claim?
-- KEYS[1] the message's de-duplication record (nonce|pinHash|sid|userId, lib/login-steps.lua)
-- ARGV: nonce
-- Reply: {pinHash} | {} when this job claimed nothing
local seen = redis.call('GET', KEYS[1])
if not seen then return {} end
local nonce, pinHash = string.match(seen, '^([^|]+)|([^|]+)')
-- never claimed, or claimed by another delivery of the message
if nonce ~= ARGV[1] then return {} end
return { pinHash }
