-- fence-guard lookup. KEYS[1] lock key. Returns {1, fence, expiry server ms} or {0}. Never the lock id.
local v = redis.call('GET', KEYS[1])
if not v then
  return {0}
end
local pttl = redis.call('PTTL', KEYS[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local sep = string.find(v, ':', 1, true)
return {1, tonumber(string.sub(v, sep + 1)), now + pttl}
