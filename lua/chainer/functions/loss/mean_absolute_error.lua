-- functions/loss/mean_absolute_error.lua: F.mean_absolute_error(x0, x1) =
-- sum(|x0 - x1|) / size, a 0-d Variable; gx0 = sign(x0 - x1) gy / size,
-- gx1 = -gx0.
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'

local M = {}

local MeanAbsoluteError = FunctionNode:extend('MeanAbsoluteError')
M.MeanAbsoluteError = MeanAbsoluteError

function MeanAbsoluteError:forward(inputs)
  local diff = inputs[1] - inputs[2]
  self._sign = T.sign(diff)
  self._shape = diff.shape
  self._n = math.max(1, tonumber(diff.ptr.numel))
  return { T.sum(T.abs(diff)) * (1 / self._n) }
end

function MeanAbsoluteError:backward(idx, gys)
  local gx0 = U.F('broadcast_to')(gys[1], self._shape) * self._sign * (1 / self._n)
  return { gx0, -gx0 }
end

function M.mean_absolute_error(x0, x1)
  checks.x0_x1('mean_absolute_error', x0, x1)
  return setmetatable({}, MeanAbsoluteError):apply({ x0, x1 })[1]
end

return M
