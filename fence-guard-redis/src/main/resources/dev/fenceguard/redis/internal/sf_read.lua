-- Singleflight read. KEYS[1] = the result key. Returns {value} if a result is retained, else {}.
local kept = redis.call('GET', KEYS[1])
if kept then
    return {kept}
end
return {}
