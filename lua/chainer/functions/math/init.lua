-- functions/math: the math family (basic_math, sum, sum_to, exp, log,
-- matmul and identity are also part of the autograd core).
local M = require('chainer.functions._family')('math', {
  'basic_math', 'sum', 'sum_to', 'exp', 'log', 'matmul', 'identity',
  'trigonometric', 'hyperbolic', 'exponential', 'sqrt', 'erf', 'lgamma', 'rounding',
  'minmax', 'maximum', 'average', 'prod', 'cumulative', 'logsumexp', 'clip',
  'squared_difference', 'linear_interpolate', 'fmod', 'bias_scale', 'batch_l2_norm_squared',
  'inv', 'tensordot', 'einsum', 'batch_matmul', 'sparse_matmul', 'zeta', 'cholesky', 'fft',
}, {
  -- helpers and the binary forms behind Variable's operators, not part of F
  add2 = true, same_shape = true, shape_equal = true, add = true, add_n = true, bias_axes = true,
  sub = true, mul = true, div = true, pow = true, mod = true, neg = true,
})
-- F.add is the n-ary add
M.add = require('chainer.functions.math.basic_math').add_n
return M
