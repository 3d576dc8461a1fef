-- send-begin: before an outbound job's attempt calls its gateway (src/queues/send-ledger.ts): what
-- the earlier attempts did, read from the job's delivery record, and this attempt marked as
-- sending unless one of them got the message to the gateway.
-- KEYS[1] the job's delivery record (keys.ts `outbound`)
-- ARGV: now (ms), the record's lifetime (s, set only when the record has none)
-- Reply: {'sent', gatewayId ('' none)} | {'new'} (no attempt before) | {'uncertain'} (one was cut
--   off while sending: whether its message went out cannot be known)
local status, gatewayId, sending = unpack(redis.call('HMGET', KEYS[1], 'status', 'gatewayId', 'sending'))
if status == 'sent' or status == 'delivered' or status == 'read' then return { 'sent', gatewayId or '' } end
redis.call('HSET', KEYS[1], 'sending', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2], 'NX')
return { sending and 'uncertain' or 'new' }
