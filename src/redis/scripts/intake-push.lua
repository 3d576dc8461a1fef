-- Appends accepted webhook messages to the intake stream in one command (the web's hot path:
-- one EVALSHA per event-loop turn instead of BullMQ's add script per job).
-- KEYS[1] = stream key; ARGV[1..n] = InboundJob JSON, one entry each (field `j`).
for i = 1, #ARGV do
  redis.call('XADD', KEYS[1], '*', 'j', ARGV[i])
end
return #ARGV
