-- fence-guard release. KEYS[1] lock key; ARGV[1] lock id. The lock value is '<lock id>:<fence>'.
-- Returns 1 if this lock id held the live lock and it is now deleted, else 0. The counter stays.
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
