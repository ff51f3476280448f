-- fence-guard acquire. KEYS[1] lock key, KEYS[2] fence counter key (same hash tag, same slot).
-- ARGV[1] lock id, ARGV[2] ttl ms. FLOORED, EPOCH_US, US_PER_FENCE, MAX_WAIT, SPIN_LIMIT and MAX_FENCE
-- are filled in when the script is loaded (one variant per fence strategy), which keeps the per-call
-- arguments short.
-- Returns {status, fence, server now ms}: status 1 acquired, 0 held, -1 fences exhausted (fence = last),
-- -2 the server clock did not advance while the script waited for it (no lock taken).
-- Numbers stay below 2^53, so Lua's doubles hold them exactly; '%.0f' avoids exponent notation.
local function micros()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function floor_at(us)
  return math.floor((us - ${EPOCH_US}) / ${US_PER_FENCE})
end
local us = micros()
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, 0, math.floor(us / 1000)}
end
local counter = redis.call('GET', KEYS[2])
local last = tonumber(counter or '0')
local nextf = last + 1
if ${FLOORED} then
  -- Two rules make the floor strictly rise across data loss (see FenceStrategy.CLOCK_FLOORED):
  -- (1) no fence is issued before the floor has reached it, so every fence is <= the floor of the
  --     instant it was issued at; a counter a few ticks ahead (two acquisitions in one tick) waits;
  -- (2) without a counter (lost, or a new key) the floor of this tick may already have been issued
  --     before the loss, so the fence is taken from the next tick.
  -- Waiting is a busy loop on TIME of at most one tick in the common case and MAX_WAIT ticks at worst;
  -- a counter further ahead than that means the clock went back, and the counter alone still rises.
  local start = floor_at(us)
  local target = nextf
  if not counter then
    target = start + 1
  end
  local floor = start
  if target > floor and target - floor <= ${MAX_WAIT} then
    local spins = 0
    while floor < target do
      spins = spins + 1
      if spins > ${SPIN_LIMIT} then
        return {-2, last, math.floor(us / 1000)}
      end
      us = micros()
      floor = floor_at(us)
    end
  end
  if floor > nextf then
    nextf = floor
  end
end
local now = math.floor(us / 1000)
if nextf > ${MAX_FENCE} then
  return {-1, last, now}
end
local text = string.format('%.0f', nextf)
if not redis.call('SET', KEYS[1], ARGV[1] .. ':' .. text, 'NX', 'PX', ARGV[2]) then
  return {0, 0, now}
end
redis.call('SET', KEYS[2], text)
return {1, nextf, now}
