-- functions/normalization/layer_normalization.lua:
-- F.layer_normalization(x, gamma, beta, {eps = 1e-5}).
-- x is (batch, units) (more generally, the trailing gamma.ndim axes are
-- normalized per leading position); y = gamma * (x - mean) / sqrt(var +
-- eps) + beta with the biased variance of each row.  The normalization is
-- the fused batch-norm kernel on the (1, rows, units) view (one "channel"
-- per row, so double backprop comes from BatchNormalizationGrad); the
-- affine part is a broadcast multiply-add.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'
local N = require 'chainer.functions.normalization._util'
local shape_equal = require('chainer.functions.math.sum_to').shape_equal
local BN = require 'chainer.functions.normalization.batch_normalization'

local M = {}

local OPTIONS = args.accept { 'eps' }

-- Normalizes each row of x2 (rows, d) (Variable or tensor): a
-- BatchNormalization node on the (1, rows, d) view with unit gamma.
function M._normalize_rows(x, rows, d, eps, dtype)
  local F = H.F()
  local L = N.layout('layer_normalization', { 1, rows, d }, { 0, 2 })
  local f = setmetatable({}, BN.BatchNormalization)
  f.L, f.eps = L, eps
  local one, zero = T.ones({ rows }, dtype), T.zeros({ rows }, dtype)
  return f:apply({ F.reshape(x, { 1, rows, d }), one, zero })[1]
end

function M.layer_normalization(x, gamma, beta, opts)
  local fn = 'layer_normalization'
  local xd = args.float_array(fn, 'x', x, 2)
  local gd = args.float_array(fn, 'gamma', gamma, 2)
  local bd = args.float_array(fn, 'beta', beta, 2)
  opts = args.options(fn, opts, OPTIONS)
  local eps = BN._number_opt(fn, 'eps', opts.eps, 1e-5, 2)
  local xs, gs = xd.shape, gd.shape
  if #xs < 2 or #gs < 1 or #gs >= #xs then
    error(string.format('%s: x must be (batch, units) and gamma (units) (got x %s, gamma %s)', fn, T.shape_str(xs),
      T.shape_str(gs)), 2)
  end
  local lead = #xs - #gs
  local rows, d = 1, 1
  for i = 1, lead do rows = rows * xs[i] end
  for i = 1, #gs do
    if gs[i] ~= xs[lead + i] then
      error(string.format('%s: gamma has shape %s, expected %s (the trailing axes of x %s)', fn, T.shape_str(gs),
        T.shape_str({ unpack(xs, lead + 1) }), T.shape_str(xs)), 2)
    end
    d = d * gs[i]
  end
  if not shape_equal(bd, gs) then
    error(string.format('%s: beta has shape %s, expected %s like gamma', fn, T.shape_str(bd.shape), T.shape_str(gs)), 2)
  end
  N.same_dtype(fn, xd, 'x', gd, 'gamma', 2)
  N.same_dtype(fn, xd, 'x', bd, 'beta', 2)
  local F = H.F()
  local xh = F.reshape(M._normalize_rows(x, rows, d, eps, xd.dtype), xs)
  return xh * F.broadcast_to(gamma, xs) + F.broadcast_to(beta, xs)
end

return M
