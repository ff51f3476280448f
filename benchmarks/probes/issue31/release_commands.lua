-- Issue #31 probe only (redis_script_cost.py): release.lua's two commands on its common path (clock-floored),
-- with a constant expiry and no Lua work, to price the commands apart from the Lua.
redis.call('GETDEL', KEYS[1])
redis.call('PEXPIREAT', KEYS[2], '4102444800000')
return 1
