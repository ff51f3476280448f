-- release.lua without the counter's PEXPIREAT (issue #31 probe only: #30 needs that command).
local v = redis.call('GETDEL', KEYS[1])
if not v then
  return 0
end
if string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then
  return 1
end
return 0
