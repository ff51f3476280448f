-- fence-guard fenced delete with tombstone. KEYS[1] data key, KEYS[2] its fence key (same slot).
-- ARGV[1] hash fence field, ARGV[2] fence, ARGV[3] '1' = strictly newer.
-- The stored fence is the larger of the fence key and, for a hash, its fence field. A hash keeps
-- only its fence field (the tombstone); any other key is deleted and its fence key kept; a key that
-- never existed gets a fence key, so an older writer cannot create it afterwards. With a horizon
-- (HORIZON true, horizon.lua before this), a key with no fence record needs a fence above the horizon,
-- and the tombstone expires (see horizon.lua). fence_record.lua (before this) judges the fence.
-- Returns {1, fence} applied, {0, stored} stale or {-2, horizon} below the horizon.
local typ = redis.call('TYPE', KEYS[1])['ok']
local f = tonumber(ARGV[2])
local refusal = fg_refusal(KEYS[1], typ, ARGV[1], redis.call('GET', KEYS[2]), f, ARGV[3] == '1')
if refusal then
  return refusal
end
if typ == 'hash' then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  if ${HORIZON} then
    redis.call('PEXPIREAT', KEYS[1], fg_expiry(f))
  end
  return {1, f}
end
if typ ~= 'none' then
  redis.call('DEL', KEYS[1])
end
if ${HORIZON} then
  redis.call('SET', KEYS[2], ARGV[2], 'PXAT', fg_expiry(f))
else
  redis.call('SET', KEYS[2], ARGV[2])
end
return {1, f}
