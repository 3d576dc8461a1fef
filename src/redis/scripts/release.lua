-- release: delete a pointer to a registration (emoji string → PIN hash) if it still names this
-- registration; a newer holder keeps it.
-- KEYS[1] the pointer; ARGV: pinHash
-- Reply: 1 when deleted, 0 when it names another (or nothing)
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
