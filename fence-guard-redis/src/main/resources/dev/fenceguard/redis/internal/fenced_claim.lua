-- fence-guard fenced claim: records a fence without changing data. KEYS[1] data key, KEYS[2] its
-- fence key (same slot). ARGV[1] hash fence field, ARGV[2] fence, ARGV[3] '1' = strictly newer.
-- The stored fence is the larger of the fence key and, for a hash, its fence field; a hash records
-- the fence in that field, any other key (or none) in the fence key. A hash holding only its fence
-- field is a tombstone. An absent or deleted key still records the fence (its tombstone), so an older
-- writer cannot create it afterwards. With a horizon (HORIZON true, horizon.lua before this), a key with
-- no fence record needs a fence above the horizon, and a tombstone expires (see horizon.lua).
-- fence_record.lua (before this) judges the fence.
-- Returns {1, fence} applied to live data, {-1, fence} recorded on a tombstone, {0, stored} stale,
-- {-2, horizon} below the horizon.
local typ = redis.call('TYPE', KEYS[1])['ok']
local f = tonumber(ARGV[2])
local refusal, field = fg_refusal(KEYS[1], typ, ARGV[1], redis.call('GET', KEYS[2]), f, ARGV[3] == '1')
-- HLEN only on a hash with a fence field, which the horizon never reads TIME for: the same commands as
-- when this was read before the verdict.
local live = typ ~= 'none' and not (field and redis.call('HLEN', KEYS[1]) == 1)
if refusal then
  return refusal
end
if typ == 'hash' then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('DEL', KEYS[2])
  if ${HORIZON} and not live then
    redis.call('PEXPIREAT', KEYS[1], fg_expiry(f))
  end
elseif ${HORIZON} and not live then
  redis.call('SET', KEYS[2], ARGV[2], 'PXAT', fg_expiry(f))
else
  redis.call('SET', KEYS[2], ARGV[2])
end
if live then
  return {1, f}
end
return {-1, f}
