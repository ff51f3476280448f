-- fence-guard fenced SET. KEYS[1] value key, KEYS[2] its fence key (same slot).
-- ARGV[1] value, ARGV[2] fence, ARGV[3] '1' = strictly newer, ARGV[4] the hash fence field.
-- The stored fence is the larger of the fence key and, if KEYS[1] is a hash, its fence field: a key
-- guarded as a hash (or tombstoned as one) is not overwritten by an older fence through SET.
-- Returns the fence when applied, or minus the stored fence when stale (a stored fence is never 0
-- then: every fence >= 1 is admitted over 0). A missing fence key counts as 0. One integer reply is
-- cheaper to decode than a list, and this is the hot path. With a horizon (HORIZON true, horizon.lua
-- before this): {1, fence} applied, {0, stored} stale, {-2, horizon} below the horizon.
-- The fence key is written as it is read (SET .. GET), on the guess that the write applies, as writes
-- under a live lease do: three commands where a GET then a SET took four. A stale write puts the fence
-- key back as it was; a script runs alone, so nobody sees the guess. On a fence key of another type
-- SET .. GET fails with WRONGTYPE before anything is written. An applied write leaves the fence key
-- without an expiry (SET drops it): the key is live. fence_record.lua (before this) judges the fence.
local old = redis.call('SET', KEYS[2], ARGV[2], 'GET')
local typ = redis.call('TYPE', KEYS[1])['ok']
local f = tonumber(ARGV[2])
local refusal = fg_refusal(KEYS[1], typ, ARGV[4], old, f, ARGV[3] == '1')
if refusal then
  -- Put the fence key back as it was: absent when below the horizon (no record), so deleted then.
  if old and ${HORIZON} and typ == 'none' then
    -- A tombstone: put its expiry back too (a function of its fence, see horizon.lua).
    redis.call('SET', KEYS[2], old, 'PXAT', fg_expiry(tonumber(old)))
  elseif old then
    redis.call('SET', KEYS[2], old)
  else
    redis.call('DEL', KEYS[2])
  end
  if ${HORIZON} then
    return refusal
  end
  return -refusal[2]
end
redis.call('SET', KEYS[1], ARGV[1])
if ${HORIZON} then
  return {1, f}
end
return f
