-- functions/noise/zoneout.lua: F.zoneout(h, x, {ratio = 0.5}).  In training
-- each element keeps the previous state h with probability ratio and takes
-- the new x otherwise: y = h * flag_h + x * (1 - flag_h).  In test mode
-- (chainer.config.train false) x is returned as is.  Linear in h and x.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local config = require('chainer.config').config
local Variable = require 'chainer.variable'
local U = require 'chainer.functions.noise._util'
local H = require 'chainer.functions.math._helpers'
local shape_equal = require('chainer.functions.math.sum_to').shape_equal

local M = {}

local OPTIONS = args.accept { 'ratio' }

local Zoneout = require('chainer.function_node'):extend('Zoneout')
M.Zoneout = Zoneout
function Zoneout:forward(inputs) return { inputs[1] * self.fh + inputs[2] * self.fx } end
function Zoneout:backward(idx, gys)
  return { U.mul_const(gys[1], self.fh), U.mul_const(gys[1], self.fx) }
end

function M.zoneout(h, x, opts)
  local fn = 'zoneout'
  local hd = args.float_array(fn, 'h', h, 2)
  local xd = args.float_array(fn, 'x', x, 2)
  opts = H.options_or_number(fn, opts, OPTIONS, 'ratio')
  if not shape_equal(hd, xd.shape) or hd.dtype ~= xd.dtype then
    error(string.format('zoneout: h %s %s and x %s %s must have one shape and dtype', T.shape_str(hd.shape), hd.dtype,
      T.shape_str(xd.shape), xd.dtype), 2)
  end
  local ratio = opts.ratio or 0.5
  if type(ratio) ~= 'number' or ratio < 0 or ratio > 1 then
    error(string.format('zoneout: ratio must be a number in [0, 1] (got %s)', tostring(ratio)), 2)
  end
  if not config.train then return Variable.as_variable(x) end
  -- (a replayed static graph would repeat this draw: record define-by-run)
  require('chainer.graph_optimizations.trace').refuse('F.zoneout draws its mask outside chainer.static_code')
  local fx = T.ge(T.random.rand(xd.shape, xd.dtype), ratio):astype(xd.dtype)
  local f = setmetatable({}, Zoneout)
  f.fx, f.fh = fx, 1 - fx
  return f:apply({ h, x })[1]
end

return M
