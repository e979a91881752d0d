-- functions/math: the math family.  Each file returns a table; its
-- lower-case functions are merged here and exported into F by
-- functions/init.lua (basic_math, sum, sum_to, exp, log, matmul and
-- identity are loaded there directly as part of the autograd core).
local files = {
  'basic_math', 'sum', 'sum_to', 'exp', 'log', 'matmul', 'identity',
  'trigonometric', 'hyperbolic', 'exponential', 'sqrt', 'erf', 'lgamma', 'rounding',
  'minmax', 'maximum', 'average', 'prod', 'cumulative', 'logsumexp', 'clip',
  'squared_difference', 'linear_interpolate', 'fmod', 'bias_scale', 'batch_l2_norm_squared',
  'inv', 'tensordot', 'einsum', 'batch_matmul',
}

-- entries of basic_math that are not user functions (F.add is the n-ary add)
local private = { add2 = true, same_shape = true, add = true, add_n = true }

local M = {}
for _, name in ipairs(files) do
  local mod = require('chainer.functions.math.' .. name)
  for k, v in pairs(mod) do
    if type(v) == 'function' and k:match('^[a-z]') and not private[k] then M[k] = v end
  end
end
M.add = require('chainer.functions.math.basic_math').add_n
return M
