-- fence-guard lookup. KEYS[1] lock key. Returns {1, fence, expiry server ms} or {0}. Never the lock id.
-- The value is '<lock id>:<fence>:<expiry ms>'; one taken by a build before 0.3 has no expiry part,
-- which PTTL and TIME then give.
local v = redis.call('GET', KEYS[1])
if not v then
  return {0}
end
local fence, expiry = string.match(v, '^[^:]*:(%d+):?(%d*)$')
if expiry == '' then
  local pttl = redis.call('PTTL', KEYS[1])
  local t = redis.call('TIME')
  expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + pttl
end
return {1, tonumber(fence), tonumber(expiry)}
