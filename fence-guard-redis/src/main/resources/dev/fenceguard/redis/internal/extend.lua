-- fence-guard extend. KEYS[1] lock key, KEYS[2] its fence counter key (same slot); ARGV[1] lock id, ARGV[2] ttl ms.
-- Returns the new expiry in server ms, or -1 if this lock id holds no live lock (never revives one).
-- The value records the new expiry too (see acquire.lua), and the key expires at that instant. A clock-floored
-- counter's expiry moves with the lease (the rule is in acquire.lua); FLOORED, EPOCH_MS, PER_MS and MARGIN_MS
-- are filled in when the script is loaded.
local t = redis.call('TIME')
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then
  local fence = string.match(v, '^[^:]*:([^:]*)')
  local e = string.format('%.0f', expiry)
  redis.call('SET', KEYS[1], ARGV[1] .. ':' .. fence .. ':' .. e, 'XX', 'PXAT', e)
  local f = tonumber(fence)
  if ${FLOORED} and f then
    local keep = ${EPOCH_MS} + math.floor(f / ${PER_MS}) + 1
    if expiry > keep then
      keep = expiry
    end
    redis.call('PEXPIREAT', KEYS[2], string.format('%.0f', keep + ${MARGIN_MS}))
  end
  return expiry
end
return -1
