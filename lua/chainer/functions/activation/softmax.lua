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

local SoftmaxGrad = FunctionNode:extend('SoftmaxGrad')
M.SoftmaxGrad = SoftmaxGrad
local function softmax_grad(y, gy, axis)
  local f = setmetatable({}, SoftmaxGrad)
  f.axis = axis
  return f:apply({ y, gy })[1]
end
function SoftmaxGrad:forward(inputs)
  self:retain_inputs({ 1, 2 })
  return { K.softmax_grad(inputs[1], inputs[2], self.axis, false) }
end
function SoftmaxGrad:backward(idx, gys)
  local F = H.F()
  local xs = self:get_retained_inputs()
  local y, gy = xs[1], xs[2]
  local ggx = gys[1]
  local a = self.axis
  local g_y, g_gy
  if H.wants(idx, 1) then
    g_y = ggx * (gy - ksum(F, gy * y, a)) - gy * ksum(F, ggx * y, a)
  end
  if H.wants(idx, 2) then g_gy = softmax_grad(y, ggx, a) end
  return { g_y, g_gy }
end

local Softmax = FunctionNode:extend('Softmax')
M.Softmax = Softmax
function Softmax:forward(inputs)
  self:retain_outputs({ 1 })
  return { K.softmax(inputs[1], self.axis, false) }
end
function Softmax:backward(idx, gys)
  local y = self:get_retained_outputs()[1]
  return { softmax_grad(y, gys[1], self.axis) }
end

local LogSoftmaxGrad = FunctionNode:extend('LogSoftmaxGrad')
M.LogSoftmaxGrad = LogSoftmaxGrad
local function log_softmax_grad(y, gy, axis)
  local f = setmetatable({}, LogSoftmaxGrad)
  f.axis = axis
  return f:apply({ y, gy })[1]
end
function LogSoftmaxGrad:forward(inputs)
  self:retain_inputs({ 1, 2 })
  return { K.softmax_grad(inputs[1], inputs[2], self.axis, true) }
end
function LogSoftmaxGrad:backward(idx, gys)
  local F = H.F()
  local xs = self:get_retained_inputs()
  local y, gy = xs[1], xs[2]
  local ggx = gys[1]
  local a = self.axis
  local p = F.exp(y)
  local g_y, g_gy
  if H.wants(idx, 1) then g_y = -(ggx * p * ksum(F, gy, a)) end
  if H.wants(idx, 2) then g_gy = ggx - ksum(F, ggx * p, a) end
  return { g_y, g_gy }
end

local LogSoftmax = FunctionNode:extend('LogSoftmax')
M.LogSoftmax = LogSoftmax
function LogSoftmax:forward(inputs)
  self:retain_outputs({ 1 })
  return { K.softmax(inputs[1], self.axis, true) }
end
function LogSoftmax:backward(idx, gys)
  local y = self:get_retained_outputs()[1]
  return { log_softmax_grad(y, gys[1], self.axis) }
end

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

M.softmax = make('softmax', Softmax)
M.log_softmax = make('log_softmax', LogSoftmax)

return M
