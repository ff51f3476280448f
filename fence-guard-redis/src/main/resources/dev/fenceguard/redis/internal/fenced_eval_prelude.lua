-- fence-guard fenced script. The caller's KEYS come first, then fence-guard's fence key of KEYS[1]
-- (last KEY); the caller's ARGV come first, then the fence and the policy flag (last two ARGV).
-- KEYS[1]'s stored fence is the larger of its fence key and, if it is a hash, its fence field.
-- The fence is recorded in the fence key before the caller's code runs: Redis keeps the writes a
-- script made before an error, so the fence must already be there to refuse older writers later.
-- With a horizon (HORIZON true, horizon.lua before this), a key with no fence record needs a fence above
-- the horizon; the fence key is written without an expiry, and the epilogue gives it one if the caller's
-- code leaves KEYS[1] absent (a script that fails halfway leaves it without: kept, never lost).
-- fence_record.lua (before this) judges the fence.
local fg_fence_key = KEYS[#KEYS]
local fg_fence = tonumber(ARGV[#ARGV - 1])
local fg_old = redis.call('GET', fg_fence_key)
local fg_refused = fg_refusal(KEYS[1], redis.call('TYPE', KEYS[1])['ok'], ${FENCE_FIELD}, fg_old, fg_fence,
    ARGV[#ARGV] == '1')
if fg_refused then
  return fg_refused
end
redis.call('SET', fg_fence_key, ARGV[#ARGV - 1])
local fg_result = (function()
