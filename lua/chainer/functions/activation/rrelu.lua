-- functions/activation/rrelu.lua: F.rrelu(x, {l = 1/8, u = 1/3, r =,
-- return_r =}): x where x >= 0, r * x elsewhere.  In training r is drawn
-- uniformly from [l, u) per element (or taken from `r`, a tensor shaped
-- like x); in test mode (chainer.config.train false) r = (l + u) / 2.
-- With return_r the function also returns r (a tensor).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local config = require('chainer.config').config
local K = require 'chainer.functions.activation._kernels'

local M = {}

local OPTIONS = args.accept { 'l', 'u', 'r', 'return_r' }

M.RReLU = K.piecewise('RReLU', function(x, node)
  local c = T.where(T.ge(x, 0), T.ones({}, x.dtype), node.r)
  return x * c, c
end)

function M.rrelu(x, opts)
  local d = args.float_array('rrelu', 'x', x)
  opts = args.options('rrelu', opts, OPTIONS)
  local l, u = opts.l or 1 / 8, opts.u or 1 / 3
  if type(l) ~= 'number' or type(u) ~= 'number' or l > u then
    error(string.format('rrelu: l and u must be numbers with l <= u (got %s and %s)', tostring(l), tostring(u)), 2)
  end
  local r = opts.r
  if not config.train then
    r = T.full(d.shape, (l + u) / 2, d.dtype)
  elseif r ~= nil and r ~= false then
    r = args.array('rrelu', 'r', r)
    if not require('chainer.functions.math.sum_to').shape_equal(r, d.shape) then
      error(string.format('rrelu: r has shape %s, expected the shape of x %s', T.shape_str(r.shape),
        T.shape_str(d.shape)), 2)
    end
    if r.dtype ~= d.dtype then r = r:astype(d.dtype) end
  else
    -- drawn outside the node: a static graph keeps running this define-by-run
    require('chainer.graph_optimizations.trace').refuse('F.rrelu draws its slopes outside its node')
    r = T.random.uniform(l, u, d.shape, d.dtype)
  end
  local f = setmetatable({}, M.RReLU)
  f.r = r
  local y = f:apply({ x })[1]
  if opts.return_r then return y, r end
  return y
end

return M
