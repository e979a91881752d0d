-- functions/math/batch_l2_norm_squared.lua: F.batch_l2_norm_squared(x), the
-- squared L2 norm of each sample (all axes but the first); gradient 2*x*gy,
-- differentiable again.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local M = {}

local BatchL2NormSquared = FunctionNode:extend('BatchL2NormSquared')
M.BatchL2NormSquared = BatchL2NormSquared

function BatchL2NormSquared:forward(inputs)
  local x = inputs[1]
  self:retain_inputs({ 1 })
  local shape = x.shape
  local n = 1
  for i = 2, #shape do n = n * shape[i] end
  local flat = x:reshape({ shape[1], n })
  return { T.sum(T.square(flat), { axis = 1 }) }
end

function BatchL2NormSquared:backward(idx, gys)
  local F = H.F()
  local x = self:get_retained_inputs()[1]
  local shape = x.shape
  local s = { shape[1] }
  for i = 2, #shape do s[i] = 1 end
  local gy = F.broadcast_to(F.reshape(gys[1], s), shape)
  return { gy * x * 2 }
end

function M.batch_l2_norm_squared(x)
  local d = args.float_array('batch_l2_norm_squared', 'x', x)
  if d.ptr.nd < 1 then
    error('batch_l2_norm_squared: x must have at least one axis (the batch); got a 0-d input', 2)
  end
  return setmetatable({}, BatchL2NormSquared):apply({ x })[1]
end

return M
