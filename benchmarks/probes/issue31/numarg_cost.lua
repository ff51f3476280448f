-- Issue #31 probe: the cost of a number argument of redis.call, printed by the script (string.format('%.0f', n)) or
-- passed as a Lua number (Redis prints it itself), against a constant string; PEXPIREAT on one key, N calls each, 3
-- rounds. Run on a PRIVATE redis-server: redis-cli -p PORT --eval numarg_cost.lua (it sets and deletes key fg:numarg).
local N = 200000
redis.call('SET', 'fg:numarg', 'x')
local base = 4102444800000 -- 2100-01-01: the key keeps existing, each call sets its expiry
local function now() local t = redis.call('TIME'); return tonumber(t[1]) * 1000000 + tonumber(t[2]) end
local out = {}
for round = 1, 3 do
  local t0 = now()
  for i = 1, N do redis.call('PEXPIREAT', 'fg:numarg', string.format('%.0f', base + i)) end
  local t1 = now()
  for i = 1, N do redis.call('PEXPIREAT', 'fg:numarg', base + i) end
  local t2 = now()
  local s = tostring(base)
  for i = 1, N do redis.call('PEXPIREAT', 'fg:numarg', s) end
  local t3 = now()
  out[#out + 1] = string.format('format %.0f ns, number %.0f ns, constant string %.0f ns', (t1 - t0) * 1000 / N, (t2 - t1) * 1000 / N, (t3 - t2) * 1000 / N)
end
redis.call('DEL', 'fg:numarg')
return out
