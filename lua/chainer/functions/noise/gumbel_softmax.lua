-- functions/noise/gumbel_softmax.lua: F.gumbel_softmax(log_p, {tau = 0.1,
-- axis = 1}): softmax((log_p + g) / tau) along axis with Gumbel noise g =
-- -log(-log(u)), u ~ U(0, 1) from chainer's tensor RNG.  A 0-d log_p gives
-- 1, as Chainer.  Differentiable through softmax.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local H = require 'chainer.functions.math._helpers'
local U = require 'chainer.functions.noise._util'

local M = {}

local OPTIONS = args.accept { 'tau', 'axis' }

function M.gumbel_softmax(log_p, opts)
  local fn = 'gumbel_softmax'
  local d = args.float_array(fn, 'log_p', log_p, 2)
  opts = H.options_or_number(fn, opts, OPTIONS, 'tau')
  local tau = opts.tau or 0.1
  if type(tau) ~= 'number' or tau <= 0 then
    error(string.format('gumbel_softmax: tau must be a positive number (got %s)', tostring(tau)), 2)
  end
  if d.ndim < 1 then return Variable(T.ones({}, d.dtype)) end
  local axis = H.axis(opts.axis == nil and 1 or opts.axis, d.ndim, fn, 2)
  -- u in (0, 1): the smallest normal-ish value keeps both logs finite
  local tiny = d.dtype == 'float64' and 1e-300 or 1e-30
  -- (a replayed static graph would repeat this draw: record define-by-run)
  require('chainer.graph_optimizations.trace').refuse('F.gumbel_softmax draws its noise outside chainer.static_code')
  local u = T.clip(T.random.rand(d.shape, 'float64'), tiny, 1 - 1e-16)
  local g = (-T.log(-T.log(u))):astype(d.dtype)
  local F = H.F()
  return F.softmax((Variable.as_variable(log_p) + g) * (1 / tau), { axis = axis })
end

return M
