-- fence-guard fenced SET. KEYS[1] value key, KEYS[2] its fence key (same slot).
-- ARGV[1] value, ARGV[2] fence, ARGV[3] '1' = strictly newer.
-- Returns the fence when applied, or minus the stored fence when stale (a stored fence is never 0
-- then: every fence >= 1 is admitted over 0). A missing fence key counts as 0. One integer reply is
-- cheaper to decode than a list, and this is the hot path.
local stored = tonumber(redis.call('GET', KEYS[2]) or '0')
local f = tonumber(ARGV[2])
if (ARGV[3] == '1' and f <= stored) or (ARGV[3] ~= '1' and f < stored) then
  return -stored
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
return f
