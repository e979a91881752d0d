-- functions/loss/absolute_error.lua: F.absolute_error(x0, x1) = |x0 - x1|
-- elementwise; gx0 = sign(x0 - x1) gy (0 where x0 == x1), gx1 = -gx0.
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local checks = require 'chainer.functions.loss._checks'

local M = {}

local AbsoluteError = FunctionNode:extend('AbsoluteError')
M.AbsoluteError = AbsoluteError

function AbsoluteError:forward(inputs)
  local diff = inputs[1] - inputs[2]
  self._sign = T.sign(diff)
  return { T.abs(diff) }
end

function AbsoluteError:backward(idx, gys)
  local gx0 = gys[1] * self._sign
  return { gx0, -gx0 }
end

function M.absolute_error(x0, x1)
  checks.x0_x1('absolute_error', x0, x1)
  return setmetatable({}, AbsoluteError):apply({ x0, x1 })[1]
end

return M
