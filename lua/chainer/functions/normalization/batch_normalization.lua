-- functions/normalization/batch_normalization.lua:
--   F.batch_normalization(x, gamma, beta, {eps = 2e-5, running_mean =,
--     running_var =, decay = 0.9, axis = nil})
--   F.fixed_batch_normalization(x, gamma, beta, mean, var, {eps = 2e-5, axis = nil})
--
-- `axis` lists the reduced axes (default: every axis but 1); gamma and
-- beta have the shape of the kept axes.  batch_normalization always uses
-- the batch statistics (biased variance); given running_mean/running_var
-- tensors are updated IN PLACE: r = decay r + (1 - decay) batch, with the
-- unbiased variance m/(m-1) for running_var, as Chainer.
--
-- The forward and the gradient are fused C kernels (runtime/cpu/
-- batch_norm.c).  The gradient is its own node, BatchNormalizationGrad
-- (inputs x, gamma, gy; outputs gx, ggamma, gbeta), whose backward is
-- composed of differentiable functions, so double backprop works as in
-- Chainer.  fixed_batch_normalization is composed of differentiable
-- functions (all five inputs get gradients, to any order).
local args = require 'chainer._args'
local trace = require 'chainer.graph_optimizations.trace'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local Variable = require 'chainer.variable'
local H = require 'chainer.functions.math._helpers'
local N = require 'chainer.functions.normalization._util'
local shape_equal = require('chainer.functions.math.sum_to').shape_equal

local as_variable = Variable.as_variable

local M = {}

local BN = FunctionNode:extend('BatchNormalization')
local BNGrad = FunctionNode:extend('BatchNormalizationGrad')
M.BatchNormalization, M.BatchNormalizationGrad = BN, BNGrad

function BN:forward(inputs)
  local L = self.L
  self:retain_inputs({ 1, 2 })
  local y3, mean, var, istd = N.bn_forward(N.to3(L, inputs[1]), inputs[2]:reshape({ L.C }),
    inputs[3]:reshape({ L.C }), self.eps, true)
  self.mean, self.var, self.inv_std = mean, var, istd
  return { N.from3(L, y3) }
end

function BN:backward(idx, gys)
  local ins = self:get_retained_inputs()
  local g = setmetatable({}, BNGrad)
  g.L, g.mean, g.inv_std = self.L, self.mean, self.inv_std
  local outs = g:apply({ ins[1], ins[2], gys[1] })
  return { outs[1], outs[2], outs[3] }
end

function BNGrad:forward(inputs)
  local L = self.L
  local x, gamma, gy = inputs[1], inputs[2], inputs[3]
  self:retain_inputs({ 1, 2, 3 })
  self:retain_outputs({ 1, 2 })
  local gx3, gg, gb = N.bn_backward(N.to3(L, x), gamma:reshape({ L.C }), N.to3(L, gy), self.mean, self.inv_std)
  return { N.from3(L, gx3), gg:reshape(L.gshape), gb:reshape(L.gshape) }
end

-- The gradient of (gx, ggamma, gbeta) with respect to (x, gamma, gy),
-- with the batch mean and inv_std held constant as in Chainer.
function BNGrad:backward(idx, ggs)
  local F = H.F()
  local L = self.L
  local ins = self:get_retained_inputs()
  local x, gamma, gy = ins[1], ins[2], ins[3]
  local outs = self:get_retained_outputs()
  local gx1, ggamma1 = outs[1], outs[2]
  local ggx1, gggamma1, ggbeta1 = ggs[1], ggs[2], ggs[3]
  -- mixed16 (float16 x and gy, float32 gamma): computed in float32, the
  -- gradients of x and gy handed back in float16
  local xdt = x.dtype
  local dt = gamma.dtype
  if xdt ~= dt then
    x, gy, gx1 = F.cast(x, dt), F.cast(gy, dt), F.cast(gx1, dt)
    if ggx1 then ggx1 = F.cast(ggx1, dt) end
  end
  local function E(v) return F.broadcast_to(F.reshape(v, L.eshape), L.xshape) end
  local function R(v) return F.sum(v, { axis = L.axes }) end
  local istd = as_variable(self.inv_std:reshape(L.gshape))
  local mean = as_variable(self.mean:reshape(L.gshape))
  local inv_m = 1 / L.m
  -- missing upstream gradients are zeros on the inputs' device
  local dev = x.array.ptr.dev
  local r = ggx1 and R(gx1 * ggx1) or as_variable(T.zeros(L.gshape, dt, dev))
  ggx1 = ggx1 or as_variable(T.zeros(L.xshape, dt, dev))
  gggamma1 = gggamma1 or as_variable(T.zeros(L.gshape, dt, dev))
  ggbeta1 = ggbeta1 or as_variable(T.zeros(L.gshape, dt, dev))
  local coeff = gamma * istd
  local coeff_m = coeff * inv_m
  local x_hat = (x - E(mean)) * E(istd)
  local gggamma2 = gggamma1 - coeff_m * R(x_hat * ggx1)
  local ggbeta2 = ggbeta1 - coeff_m * R(ggx1)
  local ggamma2 = r / gamma
  local gx_hat2 = E(gggamma2) * gy - E(coeff_m * ggamma1) * ggx1
  local gstd2 = -(istd * (r + R(x_hat * gx_hat2)))
  local gmean2 = -(istd * R(gx_hat2))
  local gx2 = E(istd) * gx_hat2 + (E(gmean2) + x_hat * E(gstd2)) * inv_m
  local ggy2 = E(gggamma2) * x_hat + E(ggbeta2) + E(coeff) * ggx1
  if xdt ~= dt then gx2, ggy2 = F.cast(gx2, xdt), F.cast(ggy2, xdt) end
  return { gx2, ggamma2, ggy2 }
end

local function check_param(fn, name, v, L, x, level, mixed16_ok)
  local d = args.float_array(fn, name, v, level + 1)
  if not shape_equal(d, L.gshape) then
    error(string.format('%s: %s has shape %s, expected %s (the extents of the axes of x that are not reduced)', fn,
      name, T.shape_str(d.shape), T.shape_str(L.gshape)), level + 1)
  end
  N.same_dtype(fn, x, 'x', d, name, level + 1, mixed16_ok)
  return d
end
M._check_param = check_param

local function number_opt(fn, name, v, default, level)
  if v == nil then return default end
  if type(v) ~= 'number' or v < 0 then
    error(string.format('%s: %s must be a non-negative number (got %s)', fn, name, tostring(v)), level + 1)
  end
  return v
end
M._number_opt = number_opt

local BN_OPTIONS = args.accept { 'eps', 'running_mean', 'running_var', 'decay', 'axis' }

function M.batch_normalization(x, gamma, beta, opts)
  local fn = 'batch_normalization'
  local xd = args.float_array(fn, 'x', x, 2)
  opts = args.options(fn, opts, BN_OPTIONS)
  local L = N.layout(fn, xd.shape, opts.axis, 2)
  local gd = check_param(fn, 'gamma', gamma, L, xd, 2, true)
  N.same_dtype(fn, gd, 'gamma', check_param(fn, 'beta', beta, L, xd, 2, true), 'beta', 2)
  local eps = number_opt(fn, 'eps', opts.eps, 2e-5, 2)
  local decay = number_opt(fn, 'decay', opts.decay, 0.9, 2)
  local rm, rv = opts.running_mean, opts.running_var
  if rm == false then rm = nil end
  if rv == false then rv = nil end
  if rm ~= nil then
    rm = check_param(fn, 'running_mean', rm, L, xd, 2, true)
    N.same_dtype(fn, gd, 'gamma', rm, 'running_mean', 2)
  end
  if rv ~= nil then
    rv = check_param(fn, 'running_var', rv, L, xd, 2, true)
    N.same_dtype(fn, gd, 'gamma', rv, 'running_var', 2)
  end
  local f = setmetatable({}, BN)
  f.L, f.eps = L, eps
  local y = f:apply({ x, gamma, beta })[1]
  if rm ~= nil or rv ~= nil then
    -- (updated outside the node: a replayed static graph would skip it)
    trace.refuse('F.batch_normalization updates running statistics outside its node')
  end
  if rm ~= nil then
    rm:copy_(rm * decay + f.mean:reshape(L.gshape) * (1 - decay))
  end
  if rv ~= nil then
    local adjust = L.m / math.max(L.m - 1, 1)
    rv:copy_(rv * decay + f.var:reshape(L.gshape) * ((1 - decay) * adjust))
  end
  return y
end

local FIXED_BN_OPTIONS = args.accept { 'eps', 'axis' }

function M.fixed_batch_normalization(x, gamma, beta, mean, var, opts)
  local fn = 'fixed_batch_normalization'
  local xd = args.float_array(fn, 'x', x, 2)
  opts = args.options(fn, opts, FIXED_BN_OPTIONS)
  local L = N.layout(fn, xd.shape, opts.axis, 2)
  local gd = check_param(fn, 'gamma', gamma, L, xd, 2, true)
  for _, p in ipairs({ { beta, 'beta' }, { mean, 'mean' }, { var, 'var' } }) do
    N.same_dtype(fn, gd, 'gamma', check_param(fn, p[2], p[1], L, xd, 2, true), p[2], 2)
  end
  local eps = number_opt(fn, 'eps', opts.eps, 2e-5, 2)
  local F = H.F()
  local function E(v) return F.broadcast_to(F.reshape(v, L.eshape), L.xshape) end
  local scale = as_variable(gamma) * (as_variable(var) + eps) ^ -0.5
  -- mixed16: a float16 x is normalized in the parameters' float32
  local xv = as_variable(x)
  if xd.dtype ~= gd.dtype then xv = F.cast(xv, gd.dtype) end
  local y = (xv - E(mean)) * E(scale) + E(beta)
  if xd.dtype ~= gd.dtype then y = F.cast(y, xd.dtype) end
  return y
end

-- x may be in Chainer's experimental channel-last memory layout: the
-- result comes in x's layout (gamma and beta keep the standard one).
M.batch_normalization = require('chainer.memory_layouts').accept_channel_last('batch_normalization',
  M.batch_normalization, false)

return M
