-- session-close: on the user's slot, close one session (its hash, its last rotation, its entry
-- in the user's index). Every token of it is refused from the next request on. Idempotent.
-- KEYS: session, rotation, the user's session index; ARGV: sessionId
-- Reply: 1 when a session was open, else 0
local open = redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
return open > 0 and 1 or 0
