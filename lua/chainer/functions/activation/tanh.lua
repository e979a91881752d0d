-- functions/activation/tanh.lua: F.tanh(x).  TanhGrad (inputs y, gy)
-- computes gy * (1 - y^2) in one C pass; its own backward is composed, so
-- any order of gradients works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local K = require 'chainer.functions.activation._kernels'

local M = {}

-- d/dy [gy (1 - y^2)] = -2 gy y
local Tanh, TanhGrad = K.output_activation('Tanh', T.tanh, K.TANH,
  function(y, gy, ggx) return ggx * gy * y * -2 end)
M.Tanh, M.TanhGrad = Tanh, TanhGrad

function M.tanh(x)
  args.float_array('tanh', 'x', x)
  return setmetatable({}, Tanh):apply({ x })[1]
end

return M
