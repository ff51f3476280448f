-- fence-guard fenced delete with tombstone. KEYS[1] data key, KEYS[2] its fence key (same slot).
-- ARGV[1] hash fence field, ARGV[2] fence, ARGV[3] '1' = strictly newer.
-- A hash keeps only its fence field (the tombstone); a string is deleted and its fence key kept.
-- Returns {1, fence} applied, {0, stored} stale, {-1, 0} nothing there and no tombstone.
local typ = redis.call('TYPE', KEYS[1])['ok']
local f = tonumber(ARGV[2])
local strict = ARGV[3] == '1'
if typ == 'hash' then
  local stored = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
  if (strict and f <= stored) or ((not strict) and f < stored) then
    return {0, stored}
  end
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return {1, f}
end
local storedText = redis.call('GET', KEYS[2])
if typ == 'none' and not storedText then
  return {-1, 0}
end
local stored = tonumber(storedText or '0')
if (strict and f <= stored) or ((not strict) and f < stored) then
  return {0, stored}
end
if typ ~= 'none' then
  redis.call('DEL', KEYS[1])
end
redis.call('SET', KEYS[2], ARGV[2])
return {1, f}
