-- Issue #31 probe only: the Lua cost of turning a 13-digit number into text, ns per number, inside one script
-- (redis-cli -p PORT --eval format_cost.lua, on a private server: it runs for about a quarter of a second).
-- '%.0f' is what the scripts use; '%d' casts to a C long (32 bits on 32-bit builds, so not usable as it is);
-- the split form prints two halves below 1e9 with '%d', exact on any build.
local n = 1795737064254
local count = 200000
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local t0 = now()
for i = 1, count do local s = string.format('%.0f', n + i) end
local t1 = now()
for i = 1, count do local s = string.format('%d', n + i) end
local t2 = now()
for i = 1, count do
  local m = n + i
  local hi = math.floor(m / 1000000000)
  local s = string.format('%d%09d', hi, m - hi * 1000000000)
end
local t3 = now()
for i = 1, count do local f = function() return i end end
local t4 = now()
return {'%.0f ns ' .. string.format('%.0f', (t1 - t0) * 1000 / count), '%d ns ' .. string.format('%.0f', (t2 - t1) * 1000 / count),
  'split ns ' .. string.format('%.0f', (t3 - t2) * 1000 / count), 'closure ns ' .. string.format('%.0f', (t4 - t3) * 1000 / count)}
