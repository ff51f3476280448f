end)()
redis.call('SET', fg_fence_key, ARGV[#ARGV - 1])
return {1, fg_fence, fg_result}
