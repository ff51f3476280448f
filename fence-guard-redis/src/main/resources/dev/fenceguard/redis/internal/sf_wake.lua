-- Singleflight wake: a flight ended without a result. No keys; ARGV[1] = the channel, ARGV[2] = the flight key.
redis.call('PUBLISH', ARGV[1], ARGV[2])
return {}
