-- fence-guard fenced HSET. KEYS[1] hash, KEYS[2] its fence key (same slot); ARGV[1] fence field,
-- ARGV[2] fence, ARGV[3] '1' = strictly newer, ARGV[4..] field/value pairs.
-- The stored fence is the larger of the hash's fence field and the fence key, which holds the
-- tombstone of a key deleted or claimed while it was not a hash (or never existed) and the fence of
-- fenced scripts. Once applied, the fence lives in the hash and the fence key is dropped. With a horizon
-- (HORIZON true, horizon.lua before this), a key with no fence record needs a fence above the horizon, and
-- a tombstone hash made live again loses its expiry (HSET keeps a key's expiry; a live hash's own expiry,
-- set by its owner, is left alone). fence_record.lua (before this) judges the fence.
-- Returns {1, fence} applied, {0, stored fence} stale or {-2, horizon} below the horizon.
local old = redis.call('GET', KEYS[2])
local f = tonumber(ARGV[2])
local refusal, field = fg_refusal(KEYS[1], redis.call('TYPE', KEYS[1])['ok'], ARGV[1], old, f, ARGV[3] == '1')
if refusal then
  return refusal
end
local tombstone = ${HORIZON} and field and redis.call('HLEN', KEYS[1]) == 1
-- HSET first: on a key of another type it fails with WRONGTYPE before anything is written.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], unpack(ARGV, 4))
redis.call('DEL', KEYS[2])
if tombstone then
  redis.call('PERSIST', KEYS[1])
end
return {1, f}
