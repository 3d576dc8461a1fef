-- cancel-find: cancel-auth on the registration's slot: is this PIN pending, and what must go
-- with it? Writes nothing: the cleanup calls and cancel-delete (which deletes the registration
-- last) follow, so a crash anywhere leaves the registration there and the client's retry of
-- the cancel does it all again. A cancel answers "is this PIN pending?" like a check, so a
-- miss spends the wrong-guess budget (budget-settle).
-- KEYS[1] registration; ARGV: none
-- Reply: {outcome, pinId, state, emojiHash, askedOf, sessionId, userId} ('' for none);
--   outcome: not_found | expired | cancelled; sessionId and userId: the session of a login made
--   for it and not collected ('m', 'v'), which is closed with it (nobody can collect its tokens
--   any more); askedOf: the sender a chat question about it was asked of
--- @include "lib/now.lua"
local cur = redis.call('HMGET', KEYS[1], 'i', 'e', 'x', 's', 'ph', 'd', 'u')
-- 'k': collected (kept only for a lost answer's retry): its session is the client's now
if not cur[1] or cur[4] == 'k' then return { 'not_found', '', '', '', '', '', '' } end
if (cur[4] == 'p' or cur[4] == 'c') and now_ms() >= tonumber(cur[3]) then return { 'expired', cur[1], '', '', '', '', '' } end
-- the claim stores the session id ('d') and its user ('u') together
local open = (cur[4] == 'm' or cur[4] == 'v') and cur[6] and cur[7]
return { 'cancelled', cur[1], cur[4], cur[2] or '', cur[5] or '', open and cur[6] or '', open and cur[7] or '' }
