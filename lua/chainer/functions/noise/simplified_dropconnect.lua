-- functions/noise/simplified_dropconnect.lua:
-- F.simplified_dropconnect(x, W, b, {ratio = 0.5, train = true, mask = nil,
--   use_batchwise_mask = true})
-- A linear layer whose weights are dropped: y[i, j] = sum_k x[i, k] W[j, k]
-- mask[..., j, k] / (1 - ratio) + b[j], with mask (batch, out, in) per
-- example (use_batchwise_mask) or (out, in) shared, drawn with keep
-- probability 1 - ratio or given (0/1 values, unscaled, as Chainer).
-- x is flattened to (batch, in); b may be nil.  train = false is the plain
-- linear layer (Chainer's explicit `train` argument, not config.train).
-- Composed of differentiable functions.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local H = require 'chainer.functions.math._helpers'
local U = require 'chainer.functions.noise._util'
local shape_equal = require('chainer.functions.math.sum_to').shape_equal

local M = {}

local OPTIONS = args.accept { 'ratio', 'train', 'mask', 'use_batchwise_mask' }

function M.simplified_dropconnect(x, W, b, opts)
  local fn = 'simplified_dropconnect'
  if args.is_options(b) then b, opts = nil, b end
  local xd = args.float_array(fn, 'x', x, 2)
  local wd = args.float_array(fn, 'W', W, 2)
  opts = args.options(fn, opts, OPTIONS)
  if wd.ndim ~= 2 then error(string.format('simplified_dropconnect: W must be 2-d (out, in), got %d-d', wd.ndim), 2) end
  if xd.ndim < 1 then error('simplified_dropconnect: x must have a batch axis', 2) end
  local n, o, i = xd.shape[1], wd.shape[1], wd.shape[2]
  if xd.size ~= n * i then
    error(string.format('simplified_dropconnect: x %s does not flatten to (%d, %d) for W %s', T.shape_str(xd.shape),
      n, i, T.shape_str(wd.shape)), 2)
  end
  if xd.dtype ~= wd.dtype then
    error(string.format('simplified_dropconnect: x (%s) and W (%s) must have one dtype', xd.dtype, wd.dtype), 2)
  end
  if b ~= nil then
    local bd = args.float_array(fn, 'b', b, 2)
    if not shape_equal(bd, { o }) then
      error(string.format('simplified_dropconnect: b has shape %s, expected (%d)', T.shape_str(bd.shape), o), 2)
    end
  end
  local ratio = opts.ratio or 0.5
  if type(ratio) ~= 'number' or ratio < 0 or ratio >= 1 then
    error(string.format('simplified_dropconnect: ratio must be a number in [0, 1) (got %s)', tostring(ratio)), 2)
  end
  if opts.train == false then ratio = 0 end
  local batchwise = opts.use_batchwise_mask ~= false
  local mshape = batchwise and { n, o, i } or { o, i }
  local mask
  if opts.mask ~= nil and opts.mask ~= false then
    mask = U.shaped(fn, 'mask', opts.mask, mshape, wd.dtype, 2)
  elseif ratio == 0 then
    mask = nil
  else
    -- (a replayed static graph would repeat this draw: record define-by-run)
    require('chainer.graph_optimizations.trace').refuse('F.simplified_dropconnect draws its mask outside chainer.static_code')
    mask = T.ge(T.random.rand(mshape, wd.dtype), ratio):astype(wd.dtype)
  end
  local F = H.F()
  local scale = 1 / (1 - ratio)
  local x2 = F.reshape(x, { n, i })
  local y
  if mask == nil then
    y = F.matmul(x2, Variable.as_variable(W) * scale, { transb = true })
  elseif batchwise then
    local Wm = F.broadcast_to(W, mshape) * (mask * scale)
    y = F.sum(Wm * F.broadcast_to(F.reshape(x2, { n, 1, i }), mshape), { axis = 2 })
  else
    y = F.matmul(x2, Variable.as_variable(W) * (mask * scale), { transb = true })
  end
  if b ~= nil then y = y + F.broadcast_to(b, { n, o }) end
  return y
end

return M
