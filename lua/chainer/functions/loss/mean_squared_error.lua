-- functions/loss/mean_squared_error.lua: F.mean_squared_error(x0, x1) =
-- sum((x0 - x1)^2) / size, a 0-d Variable.  Both inputs get gradients
-- (gx0 = 2 (x0 - x1) gy / size, gx1 = -gx0); the backward is composed of
-- FunctionNodes, so double backprop works.
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'

local M = {}

local MeanSquaredError = FunctionNode:extend('MeanSquaredError')
M.MeanSquaredError = MeanSquaredError

function MeanSquaredError:forward(inputs)
  self:retain_inputs({ 1, 2 })
  local diff = inputs[1] - inputs[2]
  local n = tonumber(diff.ptr.numel)
  return { T.sum(T.square(diff)) * (1 / math.max(n, 1)) }
end

function MeanSquaredError:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local diff = xs[1] - xs[2]
  local n = diff.size
  local gx0 = U.F('broadcast_to')(gys[1], diff.shape) * diff * (2 / math.max(n, 1))
  return { gx0, -gx0 }
end

function M.mean_squared_error(x0, x1)
  checks.x0_x1('mean_squared_error', x0, x1)
  return setmetatable({}, MeanSquaredError):apply({ x0, x1 })[1]
end

return M
