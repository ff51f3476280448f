-- digits(n): a whole number n (|n| < 2^53, so a Lua double holds it exactly) as its decimal text, the
-- form a fence or an instant takes in a key, a value or a PXAT argument; filled in where a script has
-- the DIGITS placeholder. Cost (issue #31, docs/BENCHMARKS.md): '%.0f' formats any double but costs about twice a
-- '%d'; '%d' casts to a C long, which is 32 bits on some builds of Redis, so the number is printed as two
-- halves below 1e9, each of which any long holds. math.fmod is exact, so both halves are. A negative
-- number (a server clock set before fence-guard's epoch) keeps '%.0f'.
local format, fmod = string.format, math.fmod
local function digits(n)
  if n < 1000000000 then
    if n < 0 then
      return format('%.0f', n)
    end
    return format('%d', n)
  end
  local low = fmod(n, 1000000000)
  return format('%d%09d', (n - low) / 1000000000, low)
end
