-- functions/noise/gaussian.lua: F.gaussian(mean, ln_var, {eps = nil,
-- return_eps = false}): y = mean + exp(ln_var / 2) * eps with eps ~ N(0, 1)
-- from chainer's tensor RNG, or the given eps (a tensor shaped like mean).
-- Sampled in training and test mode alike (as Chainer).  Composed of
-- differentiable functions.  With return_eps, eps is the second result.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local H = require 'chainer.functions.math._helpers'
local U = require 'chainer.functions.noise._util'
local shape_equal = require('chainer.functions.math.sum_to').shape_equal
local static_code = require 'chainer.graph_optimizations.static_code'

local M = {}

local OPTIONS = args.accept { 'eps', 'return_eps' }

-- static_code: a replayed static graph draws the noise anew.
local draw_eps = static_code(function(shape, dtype) return T.random.randn(shape, dtype) end)

function M.gaussian(mean, ln_var, opts)
  local fn = 'gaussian'
  local md = args.float_array(fn, 'mean', mean, 2)
  local ld = args.float_array(fn, 'ln_var', ln_var, 2)
  if not shape_equal(md, ld.shape) or md.dtype ~= ld.dtype then
    error(string.format('gaussian: mean %s %s and ln_var %s %s must have one shape and dtype', T.shape_str(md.shape),
      md.dtype, T.shape_str(ld.shape), ld.dtype), 2)
  end
  opts = args.options(fn, opts, OPTIONS)
  local eps
  if opts.eps ~= nil and opts.eps ~= false then
    eps = U.shaped(fn, 'eps', opts.eps, md.shape, md.dtype, 2)
  else
    eps = draw_eps(md.shape, md.dtype)
  end
  local F = H.F()
  local y = F.exp(Variable.as_variable(ln_var) * 0.5) * eps + mean
  if opts.return_eps then return y, eps end
  return y
end

return M
