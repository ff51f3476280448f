-- fence-guard fenced script. The caller's KEYS come first, then fence-guard's fence key of KEYS[1]
-- (last KEY); the caller's ARGV come first, then the fence and the policy flag (last two ARGV).
-- KEYS[1]'s stored fence is the larger of its fence key and, if it is a hash, its fence field.
-- The fence is recorded in the fence key before the caller's code runs: Redis keeps the writes a
-- script made before an error, so the fence must already be there to refuse older writers later.
-- With a horizon (HORIZON true, horizon.lua before this), a key with no fence record needs a fence above
-- the horizon; the fence key is written without an expiry, and the epilogue gives it one if the caller's
-- code leaves KEYS[1] absent (a script that fails halfway leaves it without: kept, never lost).
local fg_fence_key = KEYS[#KEYS]
local fg_fence = tonumber(ARGV[#ARGV - 1])
local fg_strict = ARGV[#ARGV] == '1'
local fg_old = redis.call('GET', fg_fence_key)
local fg_stored = tonumber(fg_old or '0')
local fg_field = false
if redis.call('TYPE', KEYS[1])['ok'] == 'hash' then
  fg_field = redis.call('HGET', KEYS[1], ${FENCE_FIELD})
  local fg_h = tonumber(fg_field or '0')
  if fg_h > fg_stored then fg_stored = fg_h end
end
if ${HORIZON} and not fg_old and not fg_field then
  local fg_horizon_now = fg_horizon()
  if fg_fence <= fg_horizon_now then
    return {-2, fg_horizon_now}
  end
end
if (fg_strict and fg_fence <= fg_stored) or ((not fg_strict) and fg_fence < fg_stored) then
  return {0, fg_stored}
end
redis.call('SET', fg_fence_key, ARGV[#ARGV - 1])
local fg_result = (function()
