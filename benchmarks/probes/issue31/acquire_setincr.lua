-- Issue #31 probe only (redis_script_cost.py): a part of acquire.lua common path, to price it alone.
local t = redis.call('TIME')
redis.call('SET', KEYS[1], ARGV[1] .. ':1:2', 'NX', 'PX', 30000)
redis.call('INCR', KEYS[2])
return {1, 0, 0}
