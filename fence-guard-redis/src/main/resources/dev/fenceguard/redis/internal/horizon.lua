-- fence-guard horizon (docs/fence-lifecycle.md), put before the fenced scripts of writers built with one.
-- HORIZON_US is the horizon age H in microseconds; KEEP_MS is H plus the clock margin M in milliseconds,
-- rounded up (a tombstone may outlive the rule, never expire before it).
-- Rule 1: a write that finds no fence record for its key needs a fence above tick(TIME - H). The scripts read
-- it once they know no record exists; a script runs alone, so nothing waits after it. Redis judges expiry by
-- the time the script started, and TIME is at or after it: an expiry and this check cannot interleave.
local function fg_horizon()
  local t = redis.call('TIME')
  local h = math.floor((tonumber(t[1]) * 1000000 + tonumber(t[2]) - ${HORIZON_US} - ${EPOCH_US}) / ${US_PER_FENCE})
  if h < 0 then
    return 0
  end
  return h
end
-- When a tombstone holding fence f may go (PXAT): the first millisecond whose every tick exceeds f, plus H and
-- M. Then tick(now - H - M) > f, which is what rule 1 refuses from then on. A function of f alone, so that a
-- script that rewrites a tombstone puts back exactly the expiry it had.
local function fg_expiry(f)
  return string.format('%.0f', ${EPOCH_MS} + math.floor(f / ${PER_MS}) + 1 + ${KEEP_MS})
end
