-- functions/loss/hinge.lua: F.hinge(x, t, {norm = 'L1', reduce = 'mean'})
-- (Chainer's positional norm also works: F.hinge(x, t, 'L2')).
--
-- x (N, K) scores, t (N,) integer labels in 0..K-1.  With s = -1 at the
-- label and +1 elsewhere, h = max(0, 1 + s x); the loss is h ('L1') or h^2
-- ('L2'), summed and divided by N for reduce = 'mean', elementwise (N, K)
-- for 'no'.  The gradient of the 'mean' loss is divided by N, as its
-- forward is (Chainer's backward divides the upstream gradient in place).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local checks = require 'chainer.functions.loss._checks'
local U = require 'chainer.functions.loss._nodes'

local M = {}
local FN = 'hinge'
local SIGNATURE = args.signature { 'norm', 'reduce' }

local Hinge = FunctionNode:extend('Hinge')
M.Hinge = Hinge

function Hinge:forward(inputs)
  self:retain_inputs({ 1 })
  local x = inputs[1]
  local b = x * self._s + 1
  local h = T.maximum(b, 0):astype(x.dtype)
  self._mask = T.gt(b, 0):astype(x.dtype)
  local loss = self.norm == 'L1' and h or h * h
  if self.reduce == 'mean' then
    return { U.batch_mean_tensor(loss, x.shape[1]) }
  end
  return { loss }
end

function Hinge:backward(idx, gys)
  local x = self:get_retained_inputs()[1]
  local gy = gys[1]
  if self.reduce == 'mean' then
    gy = U.F('broadcast_to')(gy * (1 / math.max(1, x.shape[1])), x.shape)
  end
  local s = self._s
  if self.norm == 'L1' then return { gy * (self._mask * s), nil } end
  local h = (x * s + 1) * self._mask
  return { gy * h * s * 2, nil }
end

function M.hinge(x, t, norm, reduce)
  local xd, td = args.float_array(FN, 'x', x), args.int_array(FN, 't', t)
  local o = args.parse(FN, SIGNATURE, 2, norm, reduce)
  checks.ndim(FN, 'x', xd, 2)
  checks.one_per_row(FN, 't', td, 'x', xd)
  local nrm = o.norm or 'L1'
  if nrm ~= 'L1' and nrm ~= 'L2' then
    error(string.format("%s: norm must be 'L1' or 'L2' (got %s)", FN, tostring(nrm)), 2)
  end
  local red = checks.reduce(FN, o.reduce, 'mean', { 'mean', 'no' })
  local n, k = xd.shape[1], xd.shape[2]
  checks.labels(FN, 't', td, k)
  local onehot = T.eq(td:astype('int64'):reshape({ n, 1 }), T.arange(0, k, 1, 'int64'):reshape({ 1, k }))
  local f = setmetatable({}, Hinge)
  f._s = 1 - onehot:astype(xd.dtype) * 2
  f.norm, f.reduce = nrm, red
  return f:apply({ x, t })[1]
end

return M
