-- Step: check and spend one IP group's budgets (wrong-guess budgets reserved; budget-settle
-- refunds them unless the request was a wrong guess). Its keys share the group's tag.
-- KEYS: the group's budgets; ARGV: their description (lib/budgets.lua)
-- Returns {'limited', waitMs, index} | {'>'}
local limited = budgets_take(budgets_read(KEYS, ARGV, 1))
if limited then return limited end
return { '>' }
