-- fence-guard fenced script. The caller's KEYS come first, then fence-guard's fence key (last KEY);
-- the caller's ARGV come first, then the fence and the policy flag (last two ARGV).
-- The fence is checked before the caller's code runs and stored after it returns.
local fg_fence_key = KEYS[#KEYS]
local fg_fence = tonumber(ARGV[#ARGV - 1])
local fg_strict = ARGV[#ARGV] == '1'
local fg_stored = tonumber(redis.call('GET', fg_fence_key) or '0')
if (fg_strict and fg_fence <= fg_stored) or ((not fg_strict) and fg_fence < fg_stored) then
  return {0, fg_stored}
end
local fg_result = (function()
