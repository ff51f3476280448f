-- Singleflight begin. KEYS[1] = the flight key (fence of the newest flight begun), KEYS[2] = the result
-- key (expires with its retention); same hash tag. ARGV[1] = this flight's fence.
-- Returns {'retained', value} | {'superseded', newest fence} | {'started'}. Fences stay below 2^53: exact in Lua.
local kept = redis.call('GET', KEYS[2])
if kept then
    return {'retained', kept}
end
local newest = redis.call('GET', KEYS[1])
if newest and tonumber(newest) > tonumber(ARGV[1]) then
    return {'superseded', newest}
end
redis.call('SET', KEYS[1], ARGV[1])
return {'started'}
