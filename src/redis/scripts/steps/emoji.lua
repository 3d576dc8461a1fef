-- Step of register-pin on the emoji string's slot: hold the string for the registration until
-- its expiry. A crash after it leaves the string held for a registration not yet written: the
-- client's retry (same PIN, same string) holds it again; a drawn one simply lapses at expiry.
-- KEYS[1] emoji string → PIN hash
-- ARGV: pinHash, emojiHash, kind, candidateIndex, then from the step before: expiresAt[, 'decoy']
--   kind 'own': the client's string, held, or contested ('!') when another registration holds
--   it; 'draw': a server candidate, taken only when free
-- Returns {'>', expiresAt, outcome, candidateIndex, emojiHash} when held (created | contested);
--   a drawn candidate taken: {'>', expiresAt} (the next candidate tries); a drawn one held:
--   {'=', ...} as when held, so the candidates after it are skipped
local ek = KEYS[1]
local h, e, kind, index, x = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
-- a decoy (registration.lua) holds no string: it shows the client's own or the first candidate
if ARGV[6] == 'decoy' then return { kind == 'draw' and '=' or '>', x, 'decoy', index, '' } end
-- a free string is held in one call (NX); only a held one is read
if redis.call('SET', ek, h, 'PXAT', x, 'NX') then
  return { kind == 'draw' and '=' or '>', x, 'created', index, e }
end
if kind == 'draw' then return { '>', x } end
local holder = redis.call('GET', ek)
if holder and holder ~= h then
  redis.call('SET', ek, '!', 'PXAT', math.max(redis.call('PEXPIRETIME', ek), x))
  return { '>', x, 'contested', index, e }
end
redis.call('SET', ek, h, 'PXAT', x)
return { '>', x, 'created', index, e }
