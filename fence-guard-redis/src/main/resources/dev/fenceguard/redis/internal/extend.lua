-- fence-guard extend. KEYS[1] lock key; ARGV[1] lock id, ARGV[2] ttl ms.
-- Returns the new expiry in server ms, or -1 if this lock id holds no live lock (never revives one).
-- The value records the new expiry too (see acquire.lua), and the key expires at that instant.
local t = redis.call('TIME')
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then
  local fence = string.match(v, '^[^:]*:([^:]*)')
  local e = string.format('%.0f', expiry)
  redis.call('SET', KEYS[1], ARGV[1] .. ':' .. fence .. ':' .. e, 'XX', 'PXAT', e)
  return expiry
end
return -1
