-- Step: check and spend one IP group's budgets (lib/budgets.lua). Its keys share the group's tag.
-- KEYS: the group's budgets; ARGV: their description, then reserve ('1': reserve the wrong-guess
--   points now, as the guess is judged in another call; '0': budget-settle spends them on a miss)
-- Returns {'limited', waitMs, index} | {'>'}
local wait, index = budgets_take(KEYS, 1, ARGV, ARGV[budgets_end(ARGV)] == '1')
if wait then return { 'limited', wait, index } end
return { '>' }
