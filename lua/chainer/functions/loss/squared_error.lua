-- functions/loss/squared_error.lua: F.squared_error(x0, x1) = (x0 - x1)^2
-- elementwise (no reduction); gx0 = 2 (x0 - x1) gy, gx1 = -gx0.
local U = require 'chainer.functions.loss._nodes'

local M = {}

M.SquaredError, M.squared_error = U.difference_loss {
  class = 'SquaredError', name = 'squared_error',
  forward = function(node, diff)
    node:retain_inputs({ 1, 2 })
    return diff * diff
  end,
  gx0 = function(node, gy)
    local xs = node:get_retained_inputs()
    return gy * (xs[1] - xs[2]) * 2
  end,
}

return M
