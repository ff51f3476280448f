-- fence-guard fenced claim: records a fence without changing data. KEYS[1] data key, KEYS[2] its
-- fence key (same slot). ARGV[1] hash fence field, ARGV[2] fence, ARGV[3] '1' = strictly newer.
-- The stored fence is the larger of the fence key and, for a hash, its fence field; a hash records
-- the fence in that field, any other key (or none) in the fence key. A hash holding only its fence
-- field is a tombstone. An absent or deleted key still records the fence (its tombstone), so an older
-- writer cannot create it afterwards.
-- Returns {1, fence} applied to live data, {-1, fence} recorded on a tombstone, {0, stored} stale.
local typ = redis.call('TYPE', KEYS[1])['ok']
local f = tonumber(ARGV[2])
local strict = ARGV[3] == '1'
local stored = tonumber(redis.call('GET', KEYS[2]) or '0')
local live = typ ~= 'none'
if typ == 'hash' then
  local h = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
  if h > stored then stored = h end
  live = not (redis.call('HLEN', KEYS[1]) == 1 and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1)
end
if (strict and f <= stored) or ((not strict) and f < stored) then
  return {0, stored}
end
if typ == 'hash' then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('DEL', KEYS[2])
else
  redis.call('SET', KEYS[2], ARGV[2])
end
if live then
  return {1, f}
end
return {-1, f}
