-- fence-guard fenced claim: records a fence without changing data. KEYS[1] data key, KEYS[2] its
-- fence key (same slot). ARGV[1] hash fence field, ARGV[2] fence, ARGV[3] '1' = strictly newer.
-- The stored fence is the larger of the fence key and, for a hash, its fence field; a hash records
-- the fence in that field, any other key (or none) in the fence key. A hash holding only its fence
-- field is a tombstone. An absent or deleted key still records the fence (its tombstone), so an older
-- writer cannot create it afterwards. With a horizon (HORIZON true, horizon.lua before this), a key with
-- no fence record needs a fence above the horizon, and a tombstone expires (see horizon.lua).
-- Returns {1, fence} applied to live data, {-1, fence} recorded on a tombstone, {0, stored} stale,
-- {-2, horizon} below the horizon.
local typ = redis.call('TYPE', KEYS[1])['ok']
local f = tonumber(ARGV[2])
local strict = ARGV[3] == '1'
local old = redis.call('GET', KEYS[2])
local stored = tonumber(old or '0')
local live = typ ~= 'none'
local field = false
if typ == 'hash' then
  field = redis.call('HGET', KEYS[1], ARGV[1])
  local h = tonumber(field or '0')
  if h > stored then stored = h end
  live = not (field and redis.call('HLEN', KEYS[1]) == 1)
end
if ${HORIZON} and not old and not field then
  local horizon = fg_horizon()
  if f <= horizon then
    return {-2, horizon}
  end
end
if (strict and f <= stored) or ((not strict) and f < stored) then
  return {0, stored}
end
if typ == 'hash' then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('DEL', KEYS[2])
  if ${HORIZON} and not live then
    redis.call('PEXPIREAT', KEYS[1], fg_expiry(f))
  end
elseif ${HORIZON} and not live then
  redis.call('SET', KEYS[2], ARGV[2], 'PXAT', fg_expiry(f))
else
  redis.call('SET', KEYS[2], ARGV[2])
end
if live then
  return {1, f}
end
return {-1, f}
