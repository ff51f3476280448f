-- fence-guard fenced delete with tombstone. KEYS[1] data key, KEYS[2] its fence key (same slot).
-- ARGV[1] hash fence field, ARGV[2] fence, ARGV[3] '1' = strictly newer.
-- The stored fence is the larger of the fence key and, for a hash, its fence field. A hash keeps
-- only its fence field (the tombstone); any other key is deleted and its fence key kept; a key that
-- never existed gets a fence key, so an older writer cannot create it afterwards.
-- Returns {1, fence} applied or {0, stored} stale.
local typ = redis.call('TYPE', KEYS[1])['ok']
local f = tonumber(ARGV[2])
local strict = ARGV[3] == '1'
local stored = tonumber(redis.call('GET', KEYS[2]) or '0')
if typ == 'hash' then
  local h = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
  if h > stored then stored = h end
end
if (strict and f <= stored) or ((not strict) and f < stored) then
  return {0, stored}
end
if typ == 'hash' then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return {1, f}
end
if typ ~= 'none' then
  redis.call('DEL', KEYS[1])
end
redis.call('SET', KEYS[2], ARGV[2])
return {1, f}
