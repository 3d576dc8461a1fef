-- The key schema of src/redis/keys.ts for the one script that builds its keys from the prefix:
-- claim-login when it runs the whole login chain in one call on one server (docs/scaling.md).
-- Included by claim-login.lua; test/redis/key-schema.test.ts checks it builds the same keys as
-- keys.ts.
local B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
local K = {}
function K.reg(p, h) return p .. ':reg:{r' .. h .. '}' end
function K.emo(p, e) return p .. ':emo:{e' .. e .. '}' end
function K.active_bucket(h) return ((string.find(B64, string.sub(h, 1, 1), 1, true) or 1) - 1) % 16 end
function K.active(p, b) return p .. ':active:{a' .. b .. '}' end
function K.active_of(p, h) return K.active(p, K.active_bucket(h)) end
function K.user(p, u) return p .. ':user:{u' .. u .. '}' end
function K.phone(p, ph) return p .. ':phone:{p' .. ph .. '}' end
-- an identifier's account: a phone keeps the key accounts had when they were keyed by phone
function K.ident(p, kind, v)
  if kind == 'phone' then return K.phone(p, v) end
  return p .. ':ident:{i' .. kind .. ':' .. v .. '}'
end
function K.confirm(p, ph) return p .. ':confirm:{p' .. ph .. '}' end
function K.sess(p, u, s) return p .. ':sess:{u' .. u .. '}:' .. s end
function K.usess(p, u) return p .. ':usess:{u' .. u .. '}' end
function K.rot(p, u, s) return p .. ':rot:{u' .. u .. '}:' .. s end
function K.msg(p, m) return p .. ':msg:{m' .. m .. '}' end
function K.out(p, j) return p .. ':out:{o' .. j .. '}' end
function K.outgw(p, c, g) return p .. ':outgw:{g' .. c .. ':' .. g .. '}' end
function K.outst(p, c, g) return p .. ':outst:{g' .. c .. ':' .. g .. '}' end
