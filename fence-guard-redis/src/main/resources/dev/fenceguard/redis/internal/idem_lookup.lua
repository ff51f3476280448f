-- fence-guard idempotency lookup. KEYS[1] the entry (see idem_claim.lua).
-- Returns {s, fp, f, e, r, v}, or {} when there is no live entry.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = redis.call('HMGET', KEYS[1], 's', 'fp', 'f', 'e', 'r', 'v')
if not cur[1] or tonumber(cur[5]) <= now then
  return {}
end
return {cur[1], cur[2], tonumber(cur[3]), tonumber(cur[4]), tonumber(cur[5]), cur[6]}
