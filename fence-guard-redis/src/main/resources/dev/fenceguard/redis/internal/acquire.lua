-- fence-guard acquire. KEYS[1] lock key, KEYS[2] fence counter key (same hash tag, same slot).
-- ARGV[1] lock id, ARGV[2] ttl ms. FLOORED, EPOCH_MS, PER_MS and MAX_FENCE are filled in when the
-- script is loaded (one variant per fence strategy), which keeps the per-call arguments short.
-- Returns {status, fence, server now ms}: status 1 acquired, 0 held, -1 fences exhausted (fence = last).
-- Numbers stay below 2^53, so Lua's doubles hold them exactly; '%.0f' avoids exponent notation.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local nextf = last + 1
if ${FLOORED} then
  local floor = (now - ${EPOCH_MS}) * ${PER_MS}
  if floor > nextf then nextf = floor end
end
if nextf > ${MAX_FENCE} then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    return {0, 0, now}
  end
  return {-1, last, now}
end
local text = string.format('%.0f', nextf)
if not redis.call('SET', KEYS[1], ARGV[1] .. ':' .. text, 'NX', 'PX', ARGV[2]) then
  return {0, 0, now}
end
redis.call('SET', KEYS[2], text)
return {1, nextf, now}
