-- budget-take: check and spend one IP group's budgets (lib/budgets.lua), all or nothing. A
-- wrong-guess budget's point is held: the guess is judged by the next call (check,
-- cancel-find), and budget-settle keeps it on a wrong guess or gives it back.
-- KEYS: the group's budgets, then the held-points key of each wrong-guess one (one slot: the
--   group's tag)
-- ARGV: the budgets' description (lib/budgets.lua)
-- Reply: {'limited', waitMs, index} | {'busy', index} (points held by requests in flight: ask
--   again once they are settled) | {'ok'}
--- @include "lib/budgets.lua"
local n = tonumber(ARGV[1])
local wait, index = budgets_take(KEYS, 1, ARGV, n + 1)
if wait == 'busy' then return { 'busy', index } end
if wait then return { 'limited', wait, index } end
return { 'ok' }
