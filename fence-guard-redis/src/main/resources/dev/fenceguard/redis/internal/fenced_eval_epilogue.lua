end)()
return {1, fg_fence, fg_result}
