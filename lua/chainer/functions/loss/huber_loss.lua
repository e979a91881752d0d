-- functions/loss/huber_loss.lua:
--   F.huber_loss(x, t, delta, {reduce = 'sum_along_second_axis'})
--   (also F.huber_loss(x, t, {delta = 1, reduce = ...}))
--
-- With d = x - t: loss = d^2 / 2 where |d| <= delta, delta (|d| - delta/2)
-- elsewhere.  reduce = 'sum_along_second_axis' sums over axis 1; 'no'
-- keeps the elementwise loss.  gx = clip(d, -delta, delta) gy, gt = -gx; the
-- backward is composed of FunctionNodes, so double backprop works.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'

local M = {}
local FN = 'huber_loss'
local SIGNATURE = args.signature { 'delta', 'reduce' }

local HuberLoss = FunctionNode:extend('HuberLoss')
M.HuberLoss = HuberLoss

function HuberLoss:forward(inputs)
  self:retain_inputs({ 1, 2 })
  local x, t = inputs[1], inputs[2]
  local delta = self.delta
  local diff = x - t
  local a = T.abs(diff)
  local inside = T.le(a, delta)
  self._inside = inside:astype(x.dtype)
  -- the constant part of clip(d, -delta, delta) outside the band
  self._outer = (T.sign(diff) * delta) * (1 - self._inside)
  local loss = T.where(inside, diff * diff * 0.5, (a - delta * 0.5) * delta):astype(x.dtype)
  self._shape = x.shape
  if self.reduce == 'sum_along_second_axis' then return { T.sum(loss, { axis = 1 }) } end
  return { loss }
end

function HuberLoss:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local diff = xs[1] - xs[2]
  local gy = gys[1]
  if self.reduce == 'sum_along_second_axis' then gy = U.expand_axis(gy, self._shape, 1) end
  local gx = gy * (diff * self._inside + self._outer)
  return { gx, -gx }
end

function M.huber_loss(x, t, delta, opts)
  local xd, td = args.float_array(FN, 'x', x), args.array(FN, 't', t)
  local o = args.parse(FN, SIGNATURE, 2, delta, opts)
  delta = o.delta
  if type(delta) ~= 'number' then
    error(string.format('%s: delta must be a number (got %s)', FN, type(delta)), 2)
  end
  checks.pair(FN, 'x', xd, 't', td)
  local reduce = checks.reduce(FN, o.reduce, 'sum_along_second_axis', { 'sum_along_second_axis', 'no' })
  if reduce == 'sum_along_second_axis' and xd.ptr.nd < 2 then
    error(string.format("%s: reduce = 'sum_along_second_axis' needs x with at least 2 dimensions, got shape %s", FN,
      T.shape_str(xd.shape)), 2)
  end
  local f = setmetatable({}, HuberLoss)
  f.delta, f.reduce = delta, reduce
  return f:apply({ x, t })[1]
end

return M
