-- cancel-find: cancel-auth on the registration's slot: is this PIN pending, and what must go
-- with it? Writes nothing: the cleanup calls and cancel-delete (which deletes the registration
-- last) follow, so a crash anywhere leaves the registration there and the client's retry of
-- the cancel does it all again. A cancel answers "is this PIN pending?" like a check, so a
-- miss spends the wrong-guess budget (budget-settle).
-- KEYS[1] registration; ARGV: none
-- Reply: {outcome, pinId, state, emojiHash, askedOf, sessionId, userId} ('' for none);
--   outcome: not_found | expired | cancelled; sessionId and userId: the session of a login made
--   for it and not collected (claimed, verified), which is closed with it (nobody can collect its tokens
--   any more); askedOf: the sender a chat question about it was asked of
--- @include "lib/now.lua"
local pinId, emojiHash, expiresAt, state, askedOf, sessionId, userId =
  unpack(redis.call('HMGET', KEYS[1], 'pinId', 'emojiHash', 'expiresAt', 'state', 'askedOf', 'sessionId', 'userId'))
-- collected (kept only for a lost answer's retry): its session is the client's now
if not pinId or state == 'collected' then return { 'not_found', '', '', '', '', '', '' } end
if (state == 'pending' or state == 'awaiting') and now_ms() >= tonumber(expiresAt) then return { 'expired', pinId, '', '', '', '', '' } end
-- the claim stores the session id and its user together
local open = (state == 'claimed' or state == 'verified') and sessionId and userId
return { 'cancelled', pinId, state, emojiHash or '', askedOf or '', open and sessionId or '', open and userId or '' }
