-- Step: the request's answer is known; give back what budget-take spent that the answer does
-- not cost. Refused by a later budget (the PIN's): every point (all or nothing, as on one
-- slot). Otherwise the wrong-guess points reserved, unless the answer is a miss ('not_found').
-- Runs after the step that judged the guess.
-- KEYS: the group's budgets budget-take spent; ARGV: their modes ('t' | 'g', one per key),
--   then the answer of the steps before
-- Returns that answer.
local n = #KEYS
local answer = { unpack(ARGV, n + 1) }
for i, k in ipairs(KEYS) do
  if answer[1] == 'limited' or (ARGV[i] == 'g' and answer[1] ~= 'not_found') then
    -- gone: its window ended meanwhile, nothing to give back; at 0, no window to keep
    if redis.call('EXISTS', k) == 1 and redis.call('DECR', k) <= 0 then redis.call('DEL', k) end
  end
end
return answer
