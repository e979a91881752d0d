-- functions/noise/dropout.lua: F.dropout(x, {ratio = 0.5, mask = nil,
-- return_mask = false}).  In training (chainer.config.train) each element
-- is kept with probability 1 - ratio and scaled by 1 / (1 - ratio): y = x
-- * mask, with mask drawn from chainer's tensor RNG (T.random.seed) or
-- given (a tensor shaped like x that already holds the scale, as in
-- Chainer).  In test mode the input Variable itself is returned (no new
-- graph node).  With return_mask the mask is the second result (nil in
-- test mode).  The gradient gy * mask is linear (any order works).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local config = require('chainer.config').config
local Variable = require 'chainer.variable'
local U = require 'chainer.functions.noise._util'
local static_code = require 'chainer.graph_optimizations.static_code'

local M = {}

local Dropout = U.MulConstant:extend('Dropout')
M.Dropout = Dropout

local OPTIONS = args.accept { 'ratio', 'mask', 'return_mask' }

-- The scaled keep-mask; static_code: a replayed static graph draws it anew.
local draw_mask = static_code(function(shape, dtype, ratio)
  return T.ge(T.random.rand(shape, dtype), ratio):astype(dtype) * (1 / (1 - ratio))
end)

function M.dropout(x, ratio, opts)
  local fn = 'dropout'
  local d = args.float_array(fn, 'x', x, 2)
  if type(ratio) == 'table' then ratio, opts = nil, ratio end
  opts = args.options(fn, opts, OPTIONS)
  if ratio == nil then ratio = opts.ratio end
  if ratio == nil then ratio = 0.5 end
  if type(ratio) ~= 'number' or ratio < 0 or ratio >= 1 then
    error(string.format('dropout: ratio must be a number in [0, 1) (got %s)', tostring(ratio)), 2)
  end
  if not config.train then
    local v = Variable.as_variable(x)
    if opts.return_mask then return v, nil end
    return v
  end
  local mask
  if opts.mask ~= nil and opts.mask ~= false then
    mask = U.shaped(fn, 'mask', opts.mask, d.shape, d.dtype, 2)
  else
    mask = draw_mask(d.shape, d.dtype, ratio)
  end
  local y = U.mul_const(x, mask, Dropout)
  if opts.return_mask then return y, mask end
  return y
end

return M
