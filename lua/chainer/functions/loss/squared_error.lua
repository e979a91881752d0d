-- functions/loss/squared_error.lua: F.squared_error(x0, x1) = (x0 - x1)^2
-- elementwise (no reduction); gx0 = 2 (x0 - x1) gy, gx1 = -gx0.
local FunctionNode = require 'chainer.function_node'
local checks = require 'chainer.functions.loss._checks'

local M = {}

local SquaredError = FunctionNode:extend('SquaredError')
M.SquaredError = SquaredError

function SquaredError:forward(inputs)
  self:retain_inputs({ 1, 2 })
  local diff = inputs[1] - inputs[2]
  return { diff * diff }
end

function SquaredError:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local gx0 = gys[1] * (xs[1] - xs[2]) * 2
  return { gx0, -gx0 }
end

function M.squared_error(x0, x1)
  checks.x0_x1('squared_error', x0, x1)
  return setmetatable({}, SquaredError):apply({ x0, x1 })[1]
end

return M
