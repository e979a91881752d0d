-- functions/activation/tanh.lua: F.tanh(x).  TanhGrad (inputs y, gy)
-- computes gy * (1 - y^2) in one C pass; its own backward is composed, so
-- any order of gradients works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'
local K = require 'chainer.functions.activation._kernels'

local M = {}

local Tanh = FunctionNode:extend('Tanh')
M.Tanh = Tanh
local TanhGrad = FunctionNode:extend('TanhGrad')
M.TanhGrad = TanhGrad

function TanhGrad:forward(inputs)
  self:retain_inputs({ 1, 2 })
  return { K.activation_grad(K.TANH, inputs[1], inputs[2]) }
end
function TanhGrad:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local y, gy = xs[1], xs[2]
  local ggx = gys[1]
  local g_y, g_gy
  -- d/dy [gy (1 - y^2)] = -2 gy y; d/dgy = 1 - y^2
  if H.wants(idx, 1) then g_y = ggx * gy * y * -2 end
  if H.wants(idx, 2) then g_gy = setmetatable({}, TanhGrad):apply({ y, ggx })[1] end
  return { g_y, g_gy }
end

function Tanh:forward(inputs)
  self:retain_outputs({ 1 })
  return { T.tanh(inputs[1]) }
end
function Tanh:backward(idx, gys)
  local y = self:get_retained_outputs()[1]
  return { setmetatable({}, TanhGrad):apply({ y, gys[1] })[1] }
end

function M.tanh(x)
  args.float_array('tanh', 'x', x)
  return setmetatable({}, Tanh):apply({ x })[1]
end

return M
