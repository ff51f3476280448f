-- fence-guard fenced HSET. KEYS[1] hash, KEYS[2] its fence key (same slot); ARGV[1] fence field,
-- ARGV[2] fence, ARGV[3] '1' = strictly newer, ARGV[4..] field/value pairs.
-- The stored fence is the larger of the hash's fence field and the fence key, which holds the
-- tombstone of a key deleted or claimed while it was not a hash (or never existed) and the fence of
-- fenced scripts. Once applied, the fence lives in the hash and the fence key is dropped.
-- Returns {1, fence} applied or {0, stored fence} stale.
local stored = tonumber(redis.call('GET', KEYS[2]) or '0')
if redis.call('TYPE', KEYS[1])['ok'] == 'hash' then
  local h = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
  if h > stored then stored = h end
end
local f = tonumber(ARGV[2])
if (ARGV[3] == '1' and f <= stored) or (ARGV[3] ~= '1' and f < stored) then
  return {0, stored}
end
-- HSET first: on a key of another type it fails with WRONGTYPE before anything is written.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], unpack(ARGV, 4))
redis.call('DEL', KEYS[2])
return {1, f}
