-- Step: delete a pointer to a registration (emoji string → PIN hash, a phone's pending chat
-- question → PIN hash) if it still names this registration; a newer holder keeps it.
-- KEYS[1] the pointer; ARGV: pinHash, then the carry of the steps before (passed on)
-- Returns {'>', carry...}
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return { '>', unpack(ARGV, 2) }
