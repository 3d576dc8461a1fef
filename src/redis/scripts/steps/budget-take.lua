-- Step: check and spend one IP group's budgets (lib/budgets.lua). Its keys share the group's tag.
-- KEYS: the group's budgets; ARGV: their description, then reserve ('1': reserve the wrong-guess
--   points now, as the guess is judged in another call; '0': budget-settle spends them on a miss)
-- Returns {'limited', waitMs, index} | {'>'}
local list, at = budgets_read(KEYS, ARGV, 1)
local limited = budgets_take(list, ARGV[at] == '1')
if limited then return limited end
return { '>' }
