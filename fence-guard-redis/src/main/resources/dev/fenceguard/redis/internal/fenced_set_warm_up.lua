-- fence-guard warm-up of fenced SET: sent exactly as fenced_set.lua is (same KEYS and ARGV), so that a
-- warm-up runs the client's code of a real fenced SET, but it only reads the fence key and answers as
-- an applied write does (the fence; {1, fence} with a horizon). It writes nothing.
redis.call('GET', KEYS[2])
if ${HORIZON} then
  return {1, tonumber(ARGV[2])}
end
return tonumber(ARGV[2])
