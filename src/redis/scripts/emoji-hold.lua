-- emoji-hold: register-pin on the emoji string's slot: hold the string for the registration
-- until its expiry. A crash after it leaves the string held for a registration not yet
-- written: the client's retry (same PIN, same string) holds it again; a drawn one simply
-- lapses at expiry.
-- KEYS[1] emoji string → PIN hash
-- ARGV: pinHash, kind, expiresAt; kind 'own': the client's string, held, or contested ('!')
--   when another registration holds it; 'draw': a server candidate, taken only when free;
--   'decoy': a decoy's request (register.lua), which holds nothing but makes the same call
-- Reply: {'created'} | {'contested'} | {'taken'} (a drawn candidate held by another: try the next)
--   | {'decoy'}
local ek = KEYS[1]
local h, kind, x = ARGV[1], ARGV[2], tonumber(ARGV[3])
if kind == 'decoy' then return { 'decoy' } end
-- a free string is held in one call (NX); only a held one is read
if redis.call('SET', ek, h, 'PXAT', x, 'NX') then return { 'created' } end
if kind == 'draw' then return { 'taken' } end
local holder = redis.call('GET', ek)
if holder and holder ~= h then
  redis.call('SET', ek, '!', 'PXAT', math.max(redis.call('PEXPIRETIME', ek), x))
  return { 'contested' }
end
redis.call('SET', ek, h, 'PXAT', x)
return { 'created' }
