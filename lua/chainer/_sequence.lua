-- _sequence.lua: the list operations ChainList and Sequential share
-- (Chainer's MutableSequence methods on a Lua array).
local M = {}

-- The 1-based position of the first element equal to x, or nil.
function M.index(list, x)
  for i, v in ipairs(list) do if v == x then return i end end
  return nil
end

-- How many elements equal x.
function M.count(list, x)
  local k = 0
  for _, v in ipairs(list) do if v == x then k = k + 1 end end
  return k
end

-- Reverses the array in place.
function M.reverse(list)
  local n = #list
  for i = 1, math.floor(n / 2) do list[i], list[n + 1 - i] = list[n + 1 - i], list[i] end
end

return M
