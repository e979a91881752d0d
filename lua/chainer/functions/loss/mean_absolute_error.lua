-- functions/loss/mean_absolute_error.lua: F.mean_absolute_error(x0, x1) =
-- sum(|x0 - x1|) / size, a 0-d Variable; gx0 = sign(x0 - x1) gy / size,
-- gx1 = -gx0.
local T = require 'chainer.tensor'
local U = require 'chainer.functions.loss._nodes'

local M = {}

M.MeanAbsoluteError, M.mean_absolute_error = U.difference_loss {
  class = 'MeanAbsoluteError', name = 'mean_absolute_error',
  forward = function(node, diff)
    node._sign = T.sign(diff)
    node._shape = diff.shape
    node._n = math.max(1, tonumber(diff.ptr.numel))
    return T.sum(T.abs(diff)) * (1 / node._n)
  end,
  gx0 = function(node, gy) return U.F('broadcast_to')(gy, node._shape) * node._sign * (1 / node._n) end,
}

return M
