-- functions/math/exp.lua: F.exp(x) = e^x; d/dx = e^x (the retained output).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'

local M = {}

local Exp = FunctionNode:extend('Exp')
M.Exp = Exp

function Exp:forward(inputs)
  self:retain_outputs({ 1 })
  return { T.exp(inputs[1]) }
end

function Exp:backward(idx, gys)
  local y = self:get_retained_outputs()[1]
  return { gys[1] * y }
end

function M.exp(x)
  -- as Chainer: float inputs only (an int tensor would silently become float)
  args.float_array('exp', 'x', x, 2)
  return setmetatable({}, Exp):apply({ x })[1]
end

return M
