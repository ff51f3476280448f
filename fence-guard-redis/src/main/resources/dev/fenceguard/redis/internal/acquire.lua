-- fence-guard acquire. KEYS[1] lock key, KEYS[2] fence counter key (same hash tag, same slot).
-- ARGV[1] lock id, ARGV[2] ttl ms, ARGV[3] '1' = clock-floored fences, ARGV[4] floor epoch ms,
-- ARGV[5] fences per ms, ARGV[6] max fence.
-- Returns {status, fence, server now ms}: status 1 acquired, 0 held, -1 fences exhausted (fence = last).
-- Numbers stay below 2^53, so Lua's doubles hold them exactly; '%.0f' avoids exponent notation.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, 0, now}
end
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local nextf = last + 1
if ARGV[3] == '1' then
  local floor = (now - tonumber(ARGV[4])) * tonumber(ARGV[5])
  if floor > nextf then nextf = floor end
end
if nextf > tonumber(ARGV[6]) then
  return {-1, last, now}
end
local text = string.format('%.0f', nextf)
redis.call('SET', KEYS[2], text)
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. text, 'PX', ARGV[2])
return {1, nextf, now}
