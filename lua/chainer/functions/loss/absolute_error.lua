-- functions/loss/absolute_error.lua: F.absolute_error(x0, x1) = |x0 - x1|
-- elementwise; gx0 = sign(x0 - x1) gy (0 where x0 == x1), gx1 = -gx0.
local T = require 'chainer.tensor'
local U = require 'chainer.functions.loss._nodes'

local M = {}

M.AbsoluteError, M.absolute_error = U.difference_loss {
  class = 'AbsoluteError', name = 'absolute_error',
  forward = function(node, diff)
    node._sign = T.sign(diff)
    return T.abs(diff)
  end,
  gx0 = function(node, gy) return gy * node._sign end,
}

return M
