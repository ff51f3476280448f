end)()
if ${HORIZON} and redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('PEXPIREAT', fg_fence_key, fg_expiry(fg_fence))
end
return {1, fg_fence, fg_result}
