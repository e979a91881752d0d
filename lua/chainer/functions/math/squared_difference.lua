-- functions/math/squared_difference.lua: F.squared_difference(x1, x2) =
-- (x1 - x2)^2 elementwise, composed of differentiable functions.
local args = require 'chainer._args'
local H = require 'chainer.functions.math._helpers'

local M = {}

function M.squared_difference(x1, x2)
  local a, b = H.float_pair('squared_difference', 'x1', x1, 'x2', x2)
  return H.F().square(x1 - x2)
end

return M
