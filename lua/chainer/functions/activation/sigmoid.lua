-- functions/activation/sigmoid.lua: F.sigmoid(x) = 1 / (1 + exp(-x)).
-- SigmoidGrad (inputs y, gy) computes gy * y * (1 - y) in one C pass; its
-- own backward is composed, so any order of gradients works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local K = require 'chainer.functions.activation._kernels'

local M = {}

-- d/dy [gy y (1 - y)] = gy (1 - 2y)
local Sigmoid, SigmoidGrad = K.output_activation('Sigmoid', T.sigmoid, K.SIGMOID,
  function(y, gy, ggx) return ggx * gy * (1 - y * 2) end)
M.Sigmoid, M.SigmoidGrad = Sigmoid, SigmoidGrad

function M.sigmoid(x)
  args.float_array('sigmoid', 'x', x)
  return setmetatable({}, Sigmoid):apply({ x })[1]
end

return M
