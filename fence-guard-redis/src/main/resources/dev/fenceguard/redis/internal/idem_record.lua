-- fence-guard idempotency record (IdempotencyRules.record). KEYS[1] the entry (see idem_claim.lua).
-- ARGV: fence, state (C R F), result (base64), retention ms.
-- Returns 0 if recorded; otherwise the entry's fence, or -1 when there is no live entry.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = redis.call('HMGET', KEYS[1], 's', 'f', 'r')
if not cur[1] or tonumber(cur[3]) <= now then
  return -1
end
if cur[1] ~= 'P' or tonumber(cur[2]) ~= tonumber(ARGV[1]) then
  return tonumber(cur[2])
end
local r = now + tonumber(ARGV[4])
redis.call('HSET', KEYS[1], 's', ARGV[2], 'e', string.format('%d', now), 'r', string.format('%d', r), 'v', ARGV[3])
redis.call('PEXPIREAT', KEYS[1], string.format('%d', r))
return 0
