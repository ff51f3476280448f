-- fence-guard acquire. KEYS[1] lock key, KEYS[2] fence counter key (same hash tag, same slot).
-- ARGV[1] lock id, ARGV[2] ttl ms. FLOORED, EPOCH_US, EPOCH_MS, PER_MS, US_PER_FENCE, MAX_WAIT, SPIN_LIMIT,
-- MAX_FENCE and MARGIN_MS are filled in when the script is loaded (one variant per fence strategy and clock
-- margin), which keeps the per-call arguments short.
-- A clock-floored counter expires (docs/fence-lifecycle.md, lock records): at the lease's end or at the first
-- millisecond whose every tick exceeds the counter's fence, whichever is later, plus the clock margin. Once it
-- is gone, the next acquisition takes its fence from the tick after it starts (rule 2 below), which is above
-- the lost counter unless the server clock went back by more than the margin. A DENSE counter never expires:
-- without it the counter would start again from 1.
-- The lock value is '<lock id>:<fence>:<expiry ms>' and the key expires at that instant (PXAT): a release
-- that finds another holder's lock can put it back exactly as it was (see release.lua).
-- Returns {status, fence, expiry server ms}: status 1 acquired, 0 held, -1 fences exhausted (fence = last),
-- -2 the server clock did not advance while the script waited for it (no lock taken).
-- Numbers stay below 2^53, so Lua's doubles hold them exactly; digits() prints them (no exponent notation).
-- Cost (issue #31, docs/BENCHMARKS.md): the server runs this on every acquisition, so the common path (a
-- clock-floored key that is free and whose counter is behind the floor) is written out inline, ahead of
-- the local functions it does not need: Lua makes a new closure each time a 'local function' statement
-- runs. The one it does need, digits() (DIGITS below), prints each number it sends once, the text reused
-- (the fence goes into the lock value and the counter, the expiry into the lock value and PXAT), at about
-- two thirds of '%.0f''s cost: more than its closure's.
${DIGITS}
local t = redis.call('TIME')
local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local ttl = tonumber(ARGV[2])
local expiry = math.floor(us / 1000) + ttl

if not ${FLOORED} then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    return {0, 0, expiry}
  end
  local last = tonumber(redis.call('GET', KEYS[2]) or '0')
  if last + 1 > ${MAX_FENCE} then
    return {-1, last, expiry}
  end
  local f = digits(last + 1)
  local e = digits(expiry)
  redis.call('SET', KEYS[1], ARGV[1] .. ':' .. f .. ':' .. e, 'NX', 'PXAT', e)
  redis.call('SET', KEYS[2], f)
  return {1, last + 1, expiry}
end

-- Clock-floored. The common case takes three commands: TIME, the lock (SET NX, which is also the "held"
-- check) and the counter (SET .. GET PXAT, which reads the last fence while it writes the guess and its
-- expiry). The guess is the floor of this instant, the fence the rules below give whenever the counter
-- exists and is behind the floor, as it is unless the key was locked within this tick, its counter was
-- lost (or expired), or the clock went back. Otherwise the fence is worked out from the counter read and both keys are written again;
-- nobody sees the guess, as a script runs alone.
local start = math.floor((us - ${EPOCH_US}) / ${US_PER_FENCE})
if start > ${MAX_FENCE} then
  return {-1, start, expiry}
end
local s = digits(start)
local e = digits(expiry)
if not redis.call('SET', KEYS[1], ARGV[1] .. ':' .. s .. ':' .. e, 'NX', 'PXAT', e) then
  return {0, 0, expiry}
end
-- The instant (server ms) the counter may expire (the rule above): the later of the lease's end and the
-- first millisecond whose every tick exceeds the fence, plus the margin.
local keep = ${EPOCH_MS} + math.floor(start / ${PER_MS}) + 1
if expiry > keep then
  keep = expiry
end
local ok, counter = pcall(redis.call, 'SET', KEYS[2], s, 'GET', 'PXAT', digits(keep + ${MARGIN_MS}))
if ok and counter then
  local last = tonumber(counter)
  if last and last < start then
    return {1, start, expiry}
  end
end

-- Not the common case: the helpers below exist from here on only.
local function micros()
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000000 + tonumber(now[2])
end
local function floor_at(at)
  return math.floor((at - ${EPOCH_US}) / ${US_PER_FENCE})
end
-- The instant (server ms) the counter holding fence f may expire, for a lease ending at lease_end.
local function keep_until(f, lease_end)
  local above = ${EPOCH_MS} + math.floor(f / ${PER_MS}) + 1
  if lease_end > above then
    above = lease_end
  end
  return above + ${MARGIN_MS}
end
if not ok then
  -- Not a string counter: leave no lock behind and report the server's error.
  redis.call('DEL', KEYS[1])
  return redis.error_reply(counter.err or tostring(counter))
end
-- The guess overwrote the counter's expiry; the one put back is the one a release gives a counter (never
-- earlier than the rule allows). A counter that is not a number goes back as it was, without one.
local function undo()
  redis.call('DEL', KEYS[1])
  local old = tonumber(counter or '')
  if old then
    redis.call('SET', KEYS[2], counter, 'PXAT', digits(keep_until(old, math.floor(us / 1000))))
  elseif counter then
    redis.call('SET', KEYS[2], counter)
  else
    redis.call('DEL', KEYS[2])
  end
end
local last = tonumber(counter or '0')
if not last then
  undo()
  -- A code of fence-guard's own: RedisErrors gives its fixed wording, as it copies no error text.
  return redis.error_reply('FGCOUNTER the fence counter does not hold a number')
end

-- Two rules make the floor strictly rise across data loss (see FenceStrategy.CLOCK_FLOORED):
-- (1) no fence is issued before the floor has reached it, so every fence is <= the floor of the
--     instant it was issued at; a counter a few ticks ahead (two acquisitions in one tick) waits;
-- (2) without a counter (lost, or a new key) the floor of this tick may already have been issued
--     before the loss, so the fence is taken from the next tick.
-- Waiting is a busy loop on TIME of at most one tick in the common case and MAX_WAIT ticks at worst;
-- a counter further ahead than that means the clock went back, and the counter alone still rises.
local nextf = last + 1
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
      undo()
      return {-2, last, expiry}
    end
    us = micros()
    floor = floor_at(us)
  end
end
if floor > nextf then
  nextf = floor
end
if nextf > ${MAX_FENCE} then
  undo()
  return {-1, last, expiry}
end
expiry = math.floor(us / 1000) + ttl
local f = digits(nextf)
local x = digits(expiry)
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. f .. ':' .. x, 'XX', 'PXAT', x)
redis.call('SET', KEYS[2], f, 'PXAT', digits(keep_until(nextf, expiry)))
return {1, nextf, expiry}
