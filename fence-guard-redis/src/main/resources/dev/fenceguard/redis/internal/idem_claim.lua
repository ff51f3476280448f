-- fence-guard idempotency claim (IdempotencyRules.claim). KEYS[1] the entry, a hash: s state (P C R F),
-- fp fingerprint, f fence, e claim expiry / recorded-at (server ms), r retain-until (server ms), v result
-- (base64). ARGV: fingerprint, fence, ttl ms, retention ms. The key expires at r by itself.
-- Returns the entry as it stands after the claim: {s, fp, f, e, r, v}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fp, fence = ARGV[1], tonumber(ARGV[2])
local cur = redis.call('HMGET', KEYS[1], 's', 'fp', 'f', 'e', 'r', 'v')
local take
if not cur[1] or tonumber(cur[5]) <= now then
  take = true
elseif cur[2] ~= fp then
  take = false
elseif cur[1] == 'R' then
  take = fence >= tonumber(cur[3])
elseif cur[1] == 'P' then
  local f = tonumber(cur[3])
  take = fence == f or (fence > f and tonumber(cur[4]) <= now)
else
  take = false
end
if not take then
  return {cur[1], cur[2], tonumber(cur[3]), tonumber(cur[4]), tonumber(cur[5]), cur[6]}
end
local e = now + tonumber(ARGV[3])
local r = e + tonumber(ARGV[4])
redis.call('HSET', KEYS[1], 's', 'P', 'fp', fp, 'f', ARGV[2], 'e', string.format('%d', e), 'r', string.format('%d', r), 'v', '')
redis.call('PEXPIREAT', KEYS[1], string.format('%d', r))
return {'P', fp, fence, e, r, ''}
