-- functions/loss/sigmoid_cross_entropy.lua:
-- F.sigmoid_cross_entropy(x, t, {normalize = true, reduce = 'mean'}).
--
-- x holds logits, t integer labels of the same shape in {0, 1}; t == -1 is
-- ignored.  loss = -(t log σ(x) + (1 - t) log(1 - σ(x))), computed stably as
-- softplus(x) - t x.  reduce = 'mean' sums and divides by the number of
-- non-ignored labels (normalize = true) or by x.shape[0] (normalize =
-- false), never by less than 1; reduce = 'no' keeps the elementwise loss.
-- Differentiable in x only; the backward (σ(x) - t) * mask * gy is
-- composed of FunctionNodes, so double backprop works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'
local shape_equal = require('chainer.functions.math.sum_to').shape_equal

local M = {}

local SIGNATURE = args.signature { 'normalize', 'reduce' }

local SigmoidCrossEntropy = FunctionNode:extend('SigmoidCrossEntropy')
M.SigmoidCrossEntropy = SigmoidCrossEntropy

function SigmoidCrossEntropy:forward(inputs)
  self:retain_inputs({ 1 })
  local x, t = inputs[1], inputs[2]
  local dt = x.dtype
  local valid = T.ne(t, -1)
  local mask = valid:astype(dt)
  local tf = t:astype(dt)
  self._mask, self._t = mask, tf
  -- x (t - [x >= 0]) - log(1 + exp(-|x|)) is log σ(x) t + log(1 - σ(x)) (1 - t)
  local ll = x * (tf - T.ge(x, 0):astype(dt)) - T.log1p(T.exp(-T.abs(x)))
  local loss = -(ll * mask)
  if self.reduce == 'no' then return { loss } end
  local count
  if self.normalize then
    count = tonumber(T.sum(valid:astype('int64')):item())
  else
    count = x.ptr.nd > 0 and x.shape[1] or 1
  end
  if count < 1 then count = 1 end
  self._coeff = 1 / count
  return { (T.sum(loss) * self._coeff):astype(dt) }
end

function SigmoidCrossEntropy:backward(idx, gys)
  local x = self:get_retained_inputs()[1]
  local gy = gys[1]
  if self.reduce == 'mean' then
    gy = U.F('broadcast_to')(gy * self._coeff, x.shape)
  end
  return { (U.sigmoid(x) - self._t) * self._mask * gy, nil }
end

function M.sigmoid_cross_entropy(x, t, opts, reduce)
  local fn = 'sigmoid_cross_entropy'
  local xd, td = args.float_array(fn, 'x', x), args.int_array(fn, 't', t)
  -- Chainer's positional form (x, t, normalize, reduce)
  local o = args.parse(fn, SIGNATURE, 2, opts, reduce)
  if not shape_equal(xd, td.shape) then
    error(string.format('%s: x and t must have the same shape (got %s and %s)', fn,
      T.shape_str(xd.shape), T.shape_str(td.shape)), 2)
  end
  local bad = T.logical_and(T.ne(td, -1), T.logical_and(T.ne(td, 0), T.ne(td, 1)))
  if td.ptr.numel > 0 and checks.any(bad) then
    local pos = T.nonzero(bad:reshape(-1)):reshape(-1):totable()[1]
    error(string.format('%s: label t[%d] (flat position) is %d; expected 0, 1 or -1 (ignored)', fn, pos,
      td:reshape(-1):astype('int64'):totable()[pos + 1]), 2)
  end
  local f = setmetatable({}, SigmoidCrossEntropy)
  f.normalize = o.normalize ~= false
  f.reduce = checks.reduce(fn, o.reduce, 'mean', { 'mean', 'no' })
  return f:apply({ x, t })[1]
end

return M
