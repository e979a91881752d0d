-- functions/activation/hard_sigmoid.lua: F.hard_sigmoid(x) =
-- clip(0.2 * x + 0.5, 0, 1); gradient 0.2 where -2.5 < x < 2.5.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local K = require 'chainer.functions.activation._kernels'

local M = {}

M.HardSigmoid = K.piecewise('HardSigmoid', function(x)
  local c = T.logical_and(T.gt(x, -2.5), T.lt(x, 2.5)):astype(x.dtype) * 0.2
  return T.clip(x * 0.2 + 0.5, 0, 1), c
end)

function M.hard_sigmoid(x)
  args.float_array('hard_sigmoid', 'x', x)
  return setmetatable({}, M.HardSigmoid):apply({ x })[1]
end

return M
