-- functions/loss/contrastive.lua: F.contrastive(x0, x1, y, {margin = 1, reduce = 'mean'})
-- (margin may also be the 4th positional argument, as in Chainer).
--
-- x0, x1 (N, K), y (N,) integer labels (1: similar pair, 0: dissimilar).
-- With d the Euclidean distance of each row pair:
--   loss = (y d^2 + (1 - y) max(margin - d, 0)^2) / 2,
-- summed and divided by N for 'mean', per pair (N,) for 'no'.  The backward
-- is Chainer's closed form (the distance is kept at least 1e-7 there, so
-- identical rows do not divide by zero), composed of FunctionNodes.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'

local M = {}
local FN = 'contrastive'
local SIGNATURE = args.signature { 'margin', 'reduce' }

local Contrastive = FunctionNode:extend('Contrastive')
M.Contrastive = Contrastive

function Contrastive:forward(inputs)
  self:retain_inputs({ 1, 2 })
  local x0, x1, y = inputs[1], inputs[2], inputs[3]
  local dt = x0.dtype
  local yf = y:astype(dt)
  self._y = yf
  local diff = x0 - x1
  local dsq = T.sum(diff * diff, { axis = 1 })
  local md = T.maximum(T.sqrt(dsq) * -1 + self.margin, 0)
  local loss = (yf * dsq + (1 - yf) * md * md) * 0.5
  if self.reduce == 'mean' then
    return { U.batch_mean_tensor(loss, x0.shape[1]) }
  end
  return { loss }
end

function Contrastive:backward(idx, gys)
  local xs = self:get_retained_inputs()
  local x0, x1 = xs[1], xs[2]
  local n, k = x0.shape[1], x0.shape[2]
  local gy = gys[1]
  local shape = { n, k }
  local bt = U.F('broadcast_to')
  local alpha
  if self.reduce == 'mean' then alpha = bt(gy * (1 / math.max(n, 1)), shape)
  else alpha = U.expand_axis(gy, shape, 1) end
  local diff = x0 - x1
  local dist = U.F('sum')(diff * diff, { axis = 1 }) ^ 0.5
  local mdist = dist * -1 + self.margin
  dist = U.expand_axis(dist, shape, 1)
  mdist = U.expand_axis(mdist, shape, 1)
  -- max(dist, 1e-7) and max(mdist, 0) with constant masks
  local big = T.gt(dist.array, 1e-7):astype(dist.dtype)
  dist = dist * big + (1 - big) * 1e-7
  mdist = mdist * T.gt(mdist.array, 0):astype(mdist.dtype)
  local y = self._y:reshape({ n, 1 })
  local gx0 = alpha * y * diff + alpha * (1 - y) * mdist * -(diff / dist)
  return { gx0, -gx0, nil }
end

function M.contrastive(x0, x1, y, margin, reduce)
  local a, b, yd = args.float_array(FN, 'x0', x0), args.array(FN, 'x1', x1), args.int_array(FN, 'y', y)
  local o = args.parse(FN, SIGNATURE, 2, margin, reduce)
  checks.ndim(FN, 'x0', a, 2)
  checks.pair(FN, 'x0', a, 'x1', b)
  checks.one_per_row(FN, 'y', yd, 'x0', a)
  local m = o.margin
  if m == nil then m = 1 end
  if type(m) ~= 'number' or m <= 0 then
    error(string.format('%s: margin must be a positive number (got %s)', FN, tostring(m)), 2)
  end
  local f = setmetatable({}, Contrastive)
  f.margin = m
  f.reduce = checks.reduce(FN, o.reduce, 'mean', { 'mean', 'no' })
  return f:apply({ x0, x1, y })[1]
end

return M
