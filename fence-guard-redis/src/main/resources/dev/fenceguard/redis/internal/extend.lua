-- fence-guard extend. KEYS[1] lock key; ARGV[1] lock id, ARGV[2] ttl ms.
-- Returns the new expiry in server ms, or -1 if this lock id holds no live lock (never revives one).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return now + tonumber(ARGV[2])
end
return -1
