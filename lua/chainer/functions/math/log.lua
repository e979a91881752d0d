-- functions/math/log.lua: F.log(x), the natural logarithm; d/dx = 1/x.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'

local M = {}

local Log = FunctionNode:extend('Log')
M.Log = Log

function Log:forward(inputs)
  self:retain_inputs({ 1 })
  return { T.log(inputs[1]) }
end

function Log:backward(idx, gys)
  local x = self:get_retained_inputs()[1]
  return { gys[1] / x }
end

function M.log(x)
  -- as Chainer: float inputs only (an int tensor would silently become float)
  args.float_array('log', 'x', x, 2)
  return setmetatable({}, Log):apply({ x })[1]
end

return M
