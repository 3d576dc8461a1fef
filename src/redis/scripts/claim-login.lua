-- claim-login: step 1 of a login (lib/login-steps.lua, included, holds the steps): de-duplicate the message
-- id, match the chat message to a registration, find or create the sender's account by the identifiers
-- it carries (lib/identity-steps.lua), open a
-- session; two workers handling messages for one registration make one login, and a gateway's
-- repeated delivery makes none. A retry of the same job (same nonce) resumes the claim it made,
-- or finds its finished login (an attempt can fail after the login, e.g. while queueing the
-- reply): never "no match".
--
-- With confirmation on, a matching code does not log in: the registration waits for the
-- person's answer (state awaiting, the sender in askedOf, `confirm:<sender>` points at it until its expiry,
-- its emoji string stays held). YES from that sender opens the session as a code would have;
-- NO ends the registration (state denied). Answers from anyone else find nothing. An account
-- holding the `admin` role is always asked, confirmation on or off; a blocked account signs no one
-- in (the registration ends denied, `refusal` blocked).
--
-- Two ways to run, the same steps (src/auth/login-chain.ts):
--   whole chain (one server): the keys are built here by lib/keys.lua (keys.ts's schema in
--     Lua, checked against it by a test). One call, atomic.
--   one step (cluster): the step's keys are given; the reply names the next step.
-- KEYS: none (whole chain) | the step's keys, all in one slot (one step)
-- ARGV: '', stateJson, prefix (whole chain) | step, stateJson (one step)
--   state (src/auth/login-chain.ts, ClaimState): msgId, nonce, emojiHash, phone ('' when
--   unknown), addr (who is asked), ids, uname (lib/identity-steps.lua), newUid, name,
--   surname, newSid, newRefreshJti, sessTtl (ms), grace (ms), dedupTtl (s), maxSessions, mode
--   (code | yes | no | renumber), question (the one an answer names, '' none), receivedAt (ms,
--   when the message was accepted), draw (0..89, random: a new question's number), confirm (bool)
-- Reply (decoded into named fields by src/redis/scripts.ts):
--   {'claimed', pinId, pinHash, sid, refreshJti, userId, name, surname, phone, roles,
--     linkedKinds (comma-separated), recycled, conflict, numberChanged ('1' | '0'), origin (the
--     registration's), createdAt (ms, the account's), created ('1': this job made the account)}
--   | {'completed', pinId, pinHash, resultJson, origin} (this job's login, uncollected)
--   | {'done', sessionOpen '1' | '0'} (this job's login, already collected or cancelled; '1'
--     while the session it opened is open, so a retry after a crash between the login and its
--     reply still answers the person)
--   | {'ask', pinId, pinHash, expiresAt, origin, question} | {'which', (question, origin, expiresAt) × n}
--   | {'denied', pinId, pinHash, origin} | {'blocked', pinId, pinHash, origin, userId} (the sender's
--     account is blocked: the registration ends denied, as after a NO)
--   | {'renumbered', userId, changed '1' | '0', linkedKinds, conflict '1' | '0'}
--   | {'duplicate'} | {'no_match'} | {'unanswered'} (yes/no with nothing awaiting it)
--   | {'busy'} (identity races) | one step: {'next', step, stateJson, (kind, a, b) × n}, the
--     next step and the values its keys are built from
--- @include "lib/keys.lua"
--- @include "lib/identity-steps.lua"
--- @include "lib/login-steps.lua"
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
