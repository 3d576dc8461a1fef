-- Step 1 of a login (lib/login-steps.lua, prepended, holds the steps): de-duplicate the message
-- id, match the chat message to a registration, find or create the sender's account by the identifiers
-- it carries (lib/identity-steps.lua), open a
-- session; two workers handling messages for one registration make one login, and a gateway's
-- repeated delivery makes none. A retry of the same job (same nonce) resumes the claim it made,
-- or finds its finished login (an attempt can fail after the login, e.g. while queueing the
-- reply): never "no match".
--
-- With confirmation on, a matching code does not log in: the registration waits for the
-- person's answer (state 'c', the sender in `ph`, `confirm:<sender>` points at it until its expiry,
-- its emoji string stays held). YES from that sender opens the session as a code would have;
-- NO ends the registration (state 'd'). Answers from anyone else find nothing.
--
-- Two ways to run, the same steps:
--   whole chain (one server): KEYS none; ARGV: '', stateJson, prefix: the keys are built here
--     by lib/keys.lua (keys.ts's schema in Lua, checked against it by a test). One call, atomic.
--   one step (cluster): KEYS = the step's keys; ARGV: step, stateJson. Returns the result, or
--     {'next', step, stateJson, kind, a, b, kind, a, b, ...}: the next step and its keys' values.
-- state: msgId, nonce, e (emoji hash), phone ('' when unknown), addr (who is asked), ids, aliases,
--   uname (lib/identity-steps.lua), newUid, name, surname, newSid, newRj, sessTtl (ms),
--   grace (ms), dedupTtl (s), maxSessions, mode (code | yes | no | renumber), confirm (bool)
-- Returns {outcome, pinId, pinHash, sid, refreshJti, userId, name, surname, phone, roles}
--      or {'completed', pinId, pinHash, resultJson} or {'done', sessionOpen '1' | '0'}
--      or {'ask', pinId, pinHash, expiresAt, origin} or {'denied', pinId, pinHash, origin}
--      or {'renumbered', userId, changed '1' | '0', linkedKinds} or {'busy'} (identity races)
-- a claim also returns linkedKinds (comma-separated), recycled, conflict and renumbered ('1' | '0') last
-- outcome: duplicate | no_match | unanswered (yes/no with nothing awaiting it) | claimed |
--          completed (this job's login, uncollected) | done (this job's login, already
--          collected or cancelled; '1' when the session it opened is still open, so a retry
--          after a crash between the login and its reply still answers the person) | ask | denied
local step, s = ARGV[1], cjson.decode(ARGV[2])

if step == '' then
  local p = ARGV[3]
  -- the kinds of key a step names (login-steps.lua), as src/auth/login-chain.ts builds them
  local build = { msg = K.msg, emo = K.emo, confirm = K.confirm, ident = K.ident, reg = K.reg,
    active = K.active_of, user = K.user, usess = K.usess, sess = K.sess }
  local function key(need) return build[need[1]](p, need[2], need[3]) end
  step = 'msg'
  while true do
    local k = {}
    for i, need in ipairs(LOGIN_STEPS[step].keys(s)) do k[i] = key(need) end
    local nextStep, result = LOGIN_STEPS[step].run(s, k)
    if not nextStep then return result end
    step = nextStep
  end
end

local nextStep, result = LOGIN_STEPS[step].run(s, KEYS)
if not nextStep then return result end
local out = { 'next', nextStep, cjson.encode(s) }
for _, need in ipairs(LOGIN_STEPS[nextStep].keys(s)) do
  out[#out + 1] = need[1]
  out[#out + 1] = need[2]
  out[#out + 1] = need[3] or ''
end
return out
