-- budget-settle: the request's answer is known; settle the group's budgets budget-take took.
-- Refused by a later budget (the PIN's): every point is given back (all or nothing). Else a
-- wrong guess ('not_found') keeps its wrong-guess point, any other answer gives it back; the
-- point is no longer held either way.
-- KEYS: as budget-take's (the budgets, then the held-points key of each wrong-guess one)
-- ARGV: answer (limited | not_found | any other outcome), then the mode of each budget ('t' | 'g')
-- Reply: the number of points given back
local answer = ARGV[1]
local n = #ARGV - 1
local h = n + 1
local given = 0
local function give_back(k)
  -- gone: its window ended meanwhile, nothing to give back; at 0, no window to keep
  if redis.call('EXISTS', k) == 1 then
    if redis.call('DECR', k) <= 0 then redis.call('DEL', k) end
    return 1
  end
  return 0
end
for i = 1, n do
  local k, mode = KEYS[i], ARGV[i + 1]
  if mode == 'g' then
    give_back(KEYS[h])
    h = h + 1
  end
  if answer == 'limited' or (mode == 'g' and answer ~= 'not_found') then given = given + give_back(k) end
end
return given
