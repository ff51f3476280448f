-- fence-guard fenced HSET. KEYS[1] hash; ARGV[1] fence field, ARGV[2] fence, ARGV[3] '1' = strictly
-- newer, ARGV[4..] field/value pairs. The fence lives in the hash itself.
-- Returns {1, fence} applied or {0, stored fence} stale.
local stored = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local f = tonumber(ARGV[2])
if (ARGV[3] == '1' and f <= stored) or (ARGV[3] ~= '1' and f < stored) then
  return {0, stored}
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], unpack(ARGV, 4))
return {1, f}
