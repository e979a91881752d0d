-- functions/math/logsumexp.lua: F.logsumexp(x, {axis =}), log(sum(exp(x)))
-- computed stably; the gradient exp(x - y) * gy is differentiable again.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'axis' }

local LogSumExp = FunctionNode:extend('LogSumExp')
M.LogSumExp = LogSumExp

function LogSumExp:forward(inputs)
  local x = inputs[1]
  self:retain_inputs({ 1 })
  self:retain_outputs({ 1 })
  self._shape = x.shape
  return { T.logsumexp(x, { axis = self.axes }) }
end

function LogSumExp:backward(idx, gys)
  local F = H.F()
  local x = self:get_retained_inputs()[1]
  local y = self:get_retained_outputs()[1]
  local shape = self._shape
  local yb = H.unreduce(y, shape, self.axes, false)
  return { H.unreduce(gys[1], shape, self.axes, false) * F.exp(x - yb) }
end

-- F.logsumexp(x), F.logsumexp(x, {axis = 1}); axis may be a list.
function M.logsumexp(x, opts)
  local d = args.float_array('logsumexp', 'x', x)
  local axis
  if type(opts) == 'number' or (type(opts) == 'table' and opts[1] ~= nil) then axis = opts -- Chainer's positional axis
  else axis = args.options('logsumexp', opts, OPTIONS).axis end
  local f = setmetatable({}, LogSumExp)
  f.axes = H.axes(axis, d.ptr.nd, 'logsumexp')
  return f:apply({ x })[1]
end

return M
