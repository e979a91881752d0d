-- functions/normalization/l2_normalization.lua:
-- F.normalize(x, {eps = 1e-5, axis = 1}): y = x / (||x||_2 + eps), the norm
-- taken along `axis` (an integer or a table of axes).  Composed of
-- differentiable functions (any order of gradient).  Vectors that are all
-- zero get the finite gradient gy / eps, as in Chainer: their norm is
-- computed as sqrt(s + 1) - 1 with s = 0, which has the same value and a
-- finite derivative.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local H = require 'chainer.functions.math._helpers'

local M = {}

local OPTIONS = args.accept { 'eps', 'axis' }

function M.normalize(x, opts)
  local fn = 'normalize'
  local xd = args.float_array(fn, 'x', x, 2)
  opts = H.options_or_number(fn, opts, OPTIONS, 'eps')
  local eps = opts.eps or 1e-5
  if type(eps) ~= 'number' or eps < 0 then
    error(string.format('%s: eps must be a non-negative number (got %s)', fn, tostring(eps)), 2)
  end
  local axis = opts.axis == nil and 1 or opts.axis
  local nd = xd.ndim
  local axes = type(axis) == 'table' and axis or { axis }
  local norm_axes = {}
  for i, a in ipairs(axes) do norm_axes[i] = H.axis(a, nd, fn, 2) end
  local F = H.F()
  x = Variable.as_variable(x)
  local s = F.sum(x * x, { axis = norm_axes, keepdims = true })
  local zero = T.eq(s.array, 0):astype(xd.dtype)
  local norm = F.sqrt(s + zero) - zero
  return x / F.broadcast_to(norm + eps, xd.shape)
end

return M
