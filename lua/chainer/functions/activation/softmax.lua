-- functions/activation/softmax.lua: F.softmax(x, {axis = 1}) and
-- F.log_softmax(x, {axis = 1}), fused C kernels for the forward pass and
-- for the gradient (SoftmaxGrad / LogSoftmaxGrad, inputs y and gy).  The
-- gradient nodes have composed backward passes, so any order works:
--   softmax:      gx = y * (gy - s),       s = sum(gy * y)
--     d/dgy = SoftmaxGrad(y, ggx);  d/dy = ggx * (gy - s) - gy * sum(ggx * y)
--   log_softmax:  gx = gy - exp(y) * sum(gy)
--     d/dgy = ggx - sum(ggx * exp(y));  d/dy = -ggx * exp(y) * sum(gy)
local args = require 'chainer._args'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'
local K = require 'chainer.functions.activation._kernels'

local M = {}

local OPTIONS = args.accept { 'axis' }

local function ksum(F, v, axis) return F.sum(v, { axis = axis, keepdims = true }) end

-- The node pair of softmax (log = false) or log_softmax (log = true):
-- <name> runs the fused kernel along self.axis and retains y; its gradient
-- node <name>Grad (inputs y, gy) runs the gradient kernel, and the
-- gradients of that node come from second_order(F, y, gy, ggx, axis,
-- wants_y, wants_gy, grad) (grad(y, gy, axis) makes a new <name>Grad).
local function softmax_nodes(name, log, second_order)
  local Node = FunctionNode:extend(name)
  local Grad = FunctionNode:extend(name .. 'Grad')
  local function grad(y, gy, axis)
    local f = setmetatable({}, Grad)
    f.axis = axis
    return f:apply({ y, gy })[1]
  end
  function Grad:forward(inputs)
    self:retain_inputs({ 1, 2 })
    return { K.softmax_grad(inputs[1], inputs[2], self.axis, log) }
  end
  function Grad:backward(idx, gys)
    local xs = self:get_retained_inputs()
    local g_y, g_gy = second_order(H.F(), xs[1], xs[2], gys[1], self.axis, H.wants(idx, 1), H.wants(idx, 2), grad)
    return { g_y, g_gy }
  end
  function Node:forward(inputs)
    self:retain_outputs({ 1 })
    return { K.softmax(inputs[1], self.axis, log) }
  end
  function Node:backward(idx, gys)
    local y = self:get_retained_outputs()[1]
    return { grad(y, gys[1], self.axis) }
  end
  return Node, Grad
end

M.Softmax, M.SoftmaxGrad = softmax_nodes('Softmax', false, function(F, y, gy, ggx, a, wants_y, wants_gy, grad)
  local g_y, g_gy
  if wants_y then g_y = ggx * (gy - ksum(F, gy * y, a)) - gy * ksum(F, ggx * y, a) end
  if wants_gy then g_gy = grad(y, ggx, a) end
  return g_y, g_gy
end)

M.LogSoftmax, M.LogSoftmaxGrad = softmax_nodes('LogSoftmax', true, function(F, y, gy, ggx, a, wants_y, wants_gy)
  local p = F.exp(y)
  local g_y, g_gy
  if wants_y then g_y = -(ggx * p * ksum(F, gy, a)) end
  if wants_gy then g_gy = ggx - ksum(F, ggx * p, a) end
  return g_y, g_gy
end)

local function make(name, cls)
  return function(x, opts)
    local d = args.float_array(name, 'x', x)
    local axis = H.number_or_option(name, opts, OPTIONS, 'axis', 1)
    if d.ptr.nd == 0 then error(name .. ': x must have at least one axis (got a 0-d input)', 2) end
    local f = setmetatable({}, cls)
    f.axis = H.axis(axis, d.ptr.nd, name, 2)
    return f:apply({ x })[1]
  end
end

M.softmax = make('softmax', M.Softmax)
M.log_softmax = make('log_softmax', M.LogSoftmax)

return M
