-- user-block: block or unblock one account (src/accounts/block.ts): the fields the login chain
-- reads (lib/login-steps.lua, `account` and `user`) on the user hash, written only when the
-- account exists (an erased or unknown one is never half re-created).
-- KEYS[1] the user hash
-- ARGV: 'block', at (ms), by (actor text), reason ('' none) | 'unblock'
-- Reply: {'blocked', blockedAt, new '1' | '0'} (blockedAt: this block's, or the earlier one's when already
--   blocked: a second block changes nothing) | {'unblocked'} | {'none'} (unblock of an account
--   not blocked) | {'missing'} (no such account)
local uk, op = KEYS[1], ARGV[1]
if redis.call('EXISTS', uk) == 0 then return { 'missing' } end
if op == 'block' then
  local at = redis.call('HGET', uk, 'blockedAt')
  if at then return { 'blocked', at, '0' } end
  redis.call('HSET', uk, 'blockedAt', ARGV[2], 'blockedBy', ARGV[3])
  if ARGV[4] ~= '' then redis.call('HSET', uk, 'blockReason', ARGV[4]) else redis.call('HDEL', uk, 'blockReason') end
  return { 'blocked', ARGV[2], '1' }
end
if redis.call('HDEL', uk, 'blockedAt', 'blockedBy', 'blockReason') > 0 then return { 'unblocked' } end
return { 'none' }
