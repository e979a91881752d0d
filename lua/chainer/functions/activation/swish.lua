-- functions/activation/swish.lua: F.swish(x, beta) = x * sigmoid(beta * x),
-- with beta (shape x.shape[1 : 1 + beta.ndim]) broadcast over the other
-- axes; composed of differentiable functions.
local H = require 'chainer.functions.math._helpers'
local prelu = require 'chainer.functions.activation.prelu'

local M = {}

function M.swish(x, beta)
  local bb = prelu._broadcast_param('swish', x, beta, 'beta')
  return x * H.F().sigmoid(bb * x)
end

return M
