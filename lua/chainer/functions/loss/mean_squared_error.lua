-- functions/loss/mean_squared_error.lua: F.mean_squared_error(x0, x1) =
-- sum((x0 - x1)^2) / size, a 0-d Variable.  Both inputs get gradients
-- (gx0 = 2 (x0 - x1) gy / size, gx1 = -gx0); the backward is composed of
-- FunctionNodes, so double backprop works.
local T = require 'chainer.tensor'
local U = require 'chainer.functions.loss._nodes'

local M = {}

M.MeanSquaredError, M.mean_squared_error = U.difference_loss {
  class = 'MeanSquaredError', name = 'mean_squared_error',
  forward = function(node, diff)
    node:retain_inputs({ 1, 2 })
    local n = tonumber(diff.ptr.numel)
    return T.sum(T.square(diff)) * (1 / math.max(n, 1))
  end,
  gx0 = function(node, gy)
    local xs = node:get_retained_inputs()
    local diff = xs[1] - xs[2]
    local n = diff.size
    return U.F('broadcast_to')(gy, diff.shape) * diff * (2 / math.max(n, 1))
  end,
}

return M
