-- fence-guard release. KEYS[1] lock key, KEYS[2] its fence counter key (same slot); ARGV[1] lock id. The lock
-- value is '<lock id>:<fence>:<expiry ms>' (or '<lock id>:<fence>' from a build before 0.3). Returns 1 if this
-- lock id held the live lock and it is now deleted, else 0.
-- One command in the common case of a DENSE lock: GETDEL reads and deletes at once. When the lock turns out to
-- be another holder's (this lease expired and someone took the key), it is put back as it was, with the expiry
-- instant its value records; a script runs alone, so nobody sees the gap.
-- A clock-floored counter is then set to expire at the first millisecond whose every tick exceeds the released
-- fence, plus the clock margin (the rule is in acquire.lua): one PEXPIREAT, no TIME. That instant is at most the
-- release's own plus the margin, so a counter never outlives a release by more than the margin; if it has
-- passed already (a lease held longer than the margin), the counter goes at once, as the rule allows. FLOORED,
-- EPOCH_MS, PER_MS, MARGIN_MS and LEGACY_RESTORE_MS are filled in when the script is loaded.
-- Cost (issue #31): the holder's check compares the value's first bytes with the id and looks for the ':'
-- after them by its byte, and the fence is read from the position after it, so that the common path builds
-- no 'id:' string to compare with and runs no pattern over the id. A lock id holds no ':' (base64url), so
-- this reads the same fence as matching '^[^:]*:(%d+)' did. The counter's expiry goes to PEXPIREAT as a Lua number,
-- which Redis prints itself ('%.17g' in 7.0, an integer printer in later servers; exact for whole numbers below 2^53):
-- about 0.26 us less per argument, in a loop, than string.format here (benchmarks/probes/issue31/numarg_cost.lua).
local v = redis.call('GETDEL', KEYS[1])
if not v then
  return 0
end
local n = #ARGV[1]
if string.byte(v, n + 1) == 58 and string.sub(v, 1, n) == ARGV[1] then -- 58: ':'
  if ${FLOORED} then
    local f = tonumber(string.match(v, '^%d+', n + 2))
    if f then
      redis.call('PEXPIREAT', KEYS[2], ${EPOCH_MS} + math.floor(f / ${PER_MS}) + 1 + ${MARGIN_MS})
    end
  end
  return 1
end
local expiry = string.match(v, '^[^:]*:[^:]*:(%d+)$')
if expiry then
  redis.call('SET', KEYS[1], v, 'PXAT', expiry)
else
  -- Taken by an earlier build, whose value does not record its expiry: keep it for that build's
  -- longest customary lease rather than shorten it (its holder's own release or extension still works).
  redis.call('SET', KEYS[1], v, 'PX', ${LEGACY_RESTORE_MS})
end
return 0
