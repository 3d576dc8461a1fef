-- set-roles: replace a user's roles (src/accounts/roles.ts) if they are still what the caller read:
-- a compare-and-set, so two admins changing one person's roles at once never lose a change
-- (the loser reads again). The new roles are the caller's JSON text, as refresh compares it
-- (rotate-session.lua: tokens from then on carry them). On the user's slot.
-- KEYS: the user
-- ARGV: the roles as read (their JSON text, '' when the field is absent), the new roles' JSON
-- Reply: {ok} | {nouser} | {changed}
local uk = KEYS[1]
local expected, roles = ARGV[1], ARGV[2]
if redis.call('EXISTS', uk) == 0 then return {'nouser'} end
local cur = redis.call('HGET', uk, 'roles') or ''
if cur ~= expected then return {'changed'} end
redis.call('HSET', uk, 'roles', roles)
return {'ok'}
