-- functions/normalization/group_normalization.lua:
-- F.group_normalization(x, groups, gamma, beta, {eps = 1e-5}).
-- x (N, C, ...) with C divisible by groups; the statistics are taken per
-- sample over each group of C / groups channels and all spatial cells,
-- then gamma, beta (C) scale and shift each channel.  Like Chainer, the
-- normalization is batch normalization over the (1, N * groups, rest)
-- view (the fused kernel; double backprop from BatchNormalizationGrad).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'
local N = require 'chainer.functions.normalization._util'
local shape_equal = require('chainer.functions.math.sum_to').shape_equal
local BN = require 'chainer.functions.normalization.batch_normalization'
local LN = require 'chainer.functions.normalization.layer_normalization'

local M = {}

local OPTIONS = args.accept { 'eps' }

function M.group_normalization(x, groups, gamma, beta, opts)
  local fn = 'group_normalization'
  local xd = args.float_array(fn, 'x', x, 2)
  if type(groups) ~= 'number' or groups < 1 or groups ~= math.floor(groups) then
    error(string.format('%s: groups must be a positive integer (got %s)', fn, tostring(groups)), 2)
  end
  local gd = args.float_array(fn, 'gamma', gamma, 2)
  local bd = args.float_array(fn, 'beta', beta, 2)
  opts = args.options(fn, opts, OPTIONS)
  local eps = BN._number_opt(fn, 'eps', opts.eps, 1e-5, 2)
  local xs = xd.shape
  if #xs < 2 then error(string.format('%s: x must have at least 2 dimensions (N, C, ...), got %d-d', fn, #xs), 2) end
  local n, c = xs[1], xs[2]
  if c % groups ~= 0 then
    error(string.format('%s: the number of channels %d is not divisible by groups %d', fn, c, groups), 2)
  end
  for _, p in ipairs({ { gd, 'gamma' }, { bd, 'beta' } }) do
    if not shape_equal(p[1], { c }) then
      error(string.format('%s: %s has shape %s, expected (%d) (one value per channel)', fn, p[2],
        T.shape_str(p[1].shape), c), 2)
    end
    N.same_dtype(fn, xd, 'x', p[1], p[2], 2, true)
  end
  N.same_dtype(fn, gd, 'gamma', bd, 'beta', 2)
  local F = H.F()
  local rest = xd.size / (n * groups)
  local xh = F.reshape(LN._normalize_rows(x, n * groups, rest, eps, xd.dtype), xs)
  local cshape = { 1, c }
  for i = 3, #xs do cshape[i] = 1 end
  -- mixed16: float32 gamma and beta scale a float16 x in float32
  local mixed = gd.dtype ~= xd.dtype
  if mixed then xh = F.cast(xh, gd.dtype) end
  local y = xh * F.broadcast_to(F.reshape(gamma, cshape), xs) + F.broadcast_to(F.reshape(beta, cshape), xs)
  if mixed then y = F.cast(y, xd.dtype) end
  return y
end

return M
