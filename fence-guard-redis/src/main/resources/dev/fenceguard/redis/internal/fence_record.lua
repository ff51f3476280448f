-- fence-guard fence record, put before every fenced script (after horizon.lua when there is a horizon): the
-- reading and judging that fenced SET, HSET, delete, claim and the eval prelude share. Redis scripts cannot
-- require one another, so AsyncFencedRedis puts this text before each.
-- fg_refusal judges a write of fence F (STRICT: strictly newer) to KEY, whose fence key held OLD (nil when
-- absent) and whose TYPE is TYP. The stored fence is the larger of OLD and, when KEY is a hash, its fence
-- field NAME (one HGET: the caller has already read the fence key and the type, each in the order its
-- script needs). Returns the refusal or nil, and the field (false when KEY holds none):
-- {-2, horizon} when KEY has no fence record at all and F is at or below the horizon (rule 1, HORIZON true
-- only); {0, stored} when F is stale by the write rule. Below the horizon is judged first: a key with no
-- record has stored fence 0, which no fence is stale against.
local function fg_refusal(key, typ, name, old, f, strict)
  local stored = tonumber(old or '0')
  local field = false
  if typ == 'hash' then
    field = redis.call('HGET', key, name)
    local h = tonumber(field or '0')
    if h > stored then stored = h end
  end
  -- fg_horizon is horizon.lua's, there only with a horizon; HORIZON is then true, else never called.
  if ${HORIZON} and not old and not field then
    local horizon = fg_horizon()
    if f <= horizon then
      return {-2, horizon}, field
    end
  end
  if (strict and f <= stored) or ((not strict) and f < stored) then
    return {0, stored}, field
  end
  return nil, field
end
