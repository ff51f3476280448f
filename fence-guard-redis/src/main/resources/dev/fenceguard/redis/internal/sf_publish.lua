-- Singleflight publish. KEYS[1] = the flight key, KEYS[2] = the result key; same hash tag.
-- ARGV[1] = fence, ARGV[2] = the stored value, ARGV[3] = retention in ms, ARGV[4] = the channel,
-- ARGV[5] = the flight key to announce. Applies only if no greater fence began (a zombie's late
-- publish changes nothing and announces nothing). Returns {1} | {0, newest fence}.
local newest = redis.call('GET', KEYS[1])
if newest and tonumber(newest) > tonumber(ARGV[1]) then
    return {0, newest}
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return {1}
