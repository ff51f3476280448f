-- fence-guard release. KEYS[1] lock key; ARGV[1] lock id. The lock value is '<lock id>:<fence>:<expiry ms>'
-- (or '<lock id>:<fence>' from a build before 0.3). Returns 1 if this lock id held the live lock and it is
-- now deleted, else 0. The counter stays.
-- One command in the common case: GETDEL reads and deletes at once. When the lock turns out to be another
-- holder's (this lease expired and someone took the key), it is put back as it was, with the expiry
-- instant its value records; a script runs alone, so nobody sees the gap.
local v = redis.call('GETDEL', KEYS[1])
if not v then
  return 0
end
if string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then
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
