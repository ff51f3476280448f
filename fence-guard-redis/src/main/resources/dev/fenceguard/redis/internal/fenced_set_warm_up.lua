-- fence-guard warm-up of fenced SET: sent exactly as fenced_set.lua is (same KEYS and ARGV), so that a
-- warm-up runs the client's code of a real fenced SET, but it only reads the fence key and answers as
-- an applied write does (the fence). It writes nothing.
redis.call('GET', KEYS[2])
return tonumber(ARGV[2])
