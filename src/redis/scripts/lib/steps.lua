-- Runs the steps of one phase as one script: on a single Redis one round trip, atomic as a
-- whole (src/redis/scripts.ts composes it from the same step sources that a cluster runs one
-- call each). The protocol, the same in Scripts.phase() for a cluster:
-- a step returning {'>', ...} passes `...` (the carry) on, appended to the next step's ARGV;
-- {'=', ...} does the same and skips the next steps of the same name (the rest of a list of
-- alternatives); anything else is the answer. After the last step the carry is the answer.
-- PLAN, the steps to run as {name, keys, args} (tables made by this call, so the carry is
-- appended in place): a plan's prologue writes it with its fixed arguments as literals
-- (src/redis/phase-plans.ts); a call without one describes its steps in ARGV: m, then m ×
-- (step name, number of keys, number of args), then every step's args in order, and KEYS holds
-- every step's keys in order.
if PLAN == nil then
  PLAN = {}
  local m = tonumber(ARGV[1])
  local ki, ai = 1, 2 + 3 * m
  for s = 1, m do
    local at = 2 + (s - 1) * 3
    local nk, na = tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
    local keys, args = {}, {}
    for i = 1, nk do keys[i] = KEYS[ki + i - 1] end
    for i = 1, na do args[i] = ARGV[ai + i - 1] end
    PLAN[s] = { ARGV[at], keys, args }
    ki, ai = ki + nk, ai + na
  end
end
-- The carry stays in the answer it came in (after its mark) rather than being copied out.
local out, skip = { '>' }, nil
for s = 1, #PLAN do
  local st = PLAN[s]
  local name = st[1]
  if name ~= skip then
    skip = nil
    local args = st[3]
    local n = #args
    for i = 2, #out do args[n + i - 1] = out[i] end
    out = STEPS[name](st[2], args)
    local mark = out[1]
    if mark ~= '>' and mark ~= '=' then return out end
    if mark == '=' then skip = name end
  end
end
table.remove(out, 1)
return out
