-- Issue #31 probe only (redis_script_cost.py): acquire.lua's common path priced without a part, see docs/BENCHMARKS.md.
local t = redis.call('TIME')
local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local expiry = math.floor(us / 1000) + tonumber(ARGV[2])
local start = math.floor((us - ${EPOCH_US}) / ${US_PER_FENCE})
local e = string.format('%.0f', expiry)
local s = string.format('%.0f', start)
if not redis.call('SET', KEYS[1], ARGV[1] .. ':' .. s .. ':' .. e, 'NX', 'PXAT', e) then
  return {0, 0, expiry}
end
local keep = ${EPOCH_MS} + math.floor(start / ${PER_MS}) + 1
if expiry > keep then keep = expiry end
local counter = redis.call('SET', KEYS[2], s, 'GET', 'PXAT', string.format('%.0f', keep + ${MARGIN_MS}))
local last = tonumber(counter or '0')
if counter and last and last < start then
  return {1, start, expiry}
end
return redis.error_reply('not common path')
