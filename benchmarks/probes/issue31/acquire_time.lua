-- Issue #31 probe only (redis_script_cost.py): a part of acquire.lua common path, to price it alone.
local t = redis.call('TIME')
return {1, 0, 0}
