-- Step: the request's answer is known; settle the IP group's budgets after budget-take.
-- Refused by a later budget (the PIN's): every point given back (all or nothing, as on one
-- slot). Else a wrong guess ('not_found') costs a wrong-guess point: spent now, or, when
-- budget-take reserved it, kept; a right one gives a reserved point back.
-- Runs after the step that judged the guess.
-- KEYS: the group's budgets budget-take took; ARGV: their modes ('t' | 'g', one per key),
--   reserved ('1' | '0', as budget-take was told), windowMs of each key, then the answer of the
--   steps before
-- Returns that answer.
local n = #KEYS
local reserved = ARGV[n + 1] == '1'
local answer = { unpack(ARGV, 2 * n + 2) }
local miss = answer[1] == 'not_found'
local function give_back(k)
  -- gone: its window ended meanwhile, nothing to give back; at 0, no window to keep
  if redis.call('EXISTS', k) == 1 and redis.call('DECR', k) <= 0 then redis.call('DEL', k) end
end
for i, k in ipairs(KEYS) do
  local mode = ARGV[i]
  if answer[1] == 'limited' then
    if mode == 't' or reserved then give_back(k) end
  elseif mode == 'g' and reserved and not miss then
    give_back(k)
  elseif mode == 'g' and not reserved and miss then
    if redis.call('INCR', k) == 1 then redis.call('PEXPIRE', k, ARGV[n + 1 + i]) end
  end
end
return answer
