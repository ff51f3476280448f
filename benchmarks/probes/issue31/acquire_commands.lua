-- Issue #31 probe only (redis_script_cost.py): acquire.lua's three commands on its common path, with arguments
-- of the same shape and no Lua work (constant fence and expiry), to price the commands apart from the Lua.
redis.call('TIME')
redis.call('SET', KEYS[1], ARGV[1] .. ':6123456789012:4102444800000', 'NX', 'PXAT', '4102444800000')
redis.call('SET', KEYS[2], '6123456789012', 'GET', 'PXAT', '4102444800000')
return {1, 0, 0}
