-- functions/activation/sigmoid.lua: F.sigmoid(x) = 1 / (1 + exp(-x)).
-- SigmoidGrad (inputs y, gy) computes gy * y * (1 - y) in one C pass; its
-- own backward is composed, so any order of gradients works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'
local K = require 'chainer.functions.activation._kernels'

local M = {}

local Sigmoid = FunctionNode:extend('Sigmoid')
M.Sigmoid = Sigmoid
local SigmoidGrad = FunctionNode:extend('SigmoidGrad')
M.SigmoidGrad = SigmoidGrad

function SigmoidGrad:forward(inputs)
  self:retain_inputs({ 1, 2 })
  return { K.activation_grad(K.SIGMOID, inputs[1], inputs[2]) }
end
function SigmoidGrad:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local y, gy = xs[1], xs[2]
  local ggx = gys[1]
  local g_y, g_gy
  -- d/dy [gy y (1 - y)] = gy (1 - 2y); d/dgy = y (1 - y)
  if H.wants(idx, 1) then g_y = ggx * gy * (1 - y * 2) end
  if H.wants(idx, 2) then g_gy = setmetatable({}, SigmoidGrad):apply({ y, ggx })[1] end
  return { g_y, g_gy }
end

function Sigmoid:forward(inputs)
  self:retain_outputs({ 1 })
  return { T.sigmoid(inputs[1]) }
end
function Sigmoid:backward(idx, gys)
  local y = self:get_retained_outputs()[1]
  return { setmetatable({}, SigmoidGrad):apply({ y, gys[1] })[1] }
end

function M.sigmoid(x)
  args.float_array('sigmoid', 'x', x)
  return setmetatable({}, Sigmoid):apply({ x })[1]
end

return M
