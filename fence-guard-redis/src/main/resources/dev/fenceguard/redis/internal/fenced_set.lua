-- fence-guard fenced SET. KEYS[1] value key, KEYS[2] its fence key (same slot).
-- ARGV[1] value, ARGV[2] fence, ARGV[3] '1' = strictly newer.
-- Returns {1, fence} applied or {0, stored fence} stale. A missing fence key counts as 0.
local stored = tonumber(redis.call('GET', KEYS[2]) or '0')
local f = tonumber(ARGV[2])
if (ARGV[3] == '1' and f <= stored) or (ARGV[3] ~= '1' and f < stored) then
  return {0, stored}
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
return {1, f}
