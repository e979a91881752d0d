-- functions/connection/_util.lua: argument checks shared by the
-- connection functions (not exported into F).
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local Window = require 'chainer.functions._window'

local M = {}

-- The convolution kernels (conv, im2col, col2im) take float32 and float64:
-- float16 tensors go in as float32 (exact) and each result is rounded to
-- float16 once (sound: the sums are float32).
local FLOAT16 = T.DT.float16
function M.as32(t)
  if t ~= nil and t.ptr.dt == FLOAT16 then return t:astype('float32') end
  return t
end
function M.back_to(y, like)
  if like.ptr.dt == FLOAT16 then return y:astype('float16') end
  return y
end

-- x, W and the optional b (nil stays nil) of a connection function as
-- tensors; `level` as chainer._args' (2: the caller of the caller of this).
function M.x_W_b(fn, x, W, b, level)
  level = (level or 2) + 1
  local xd, Wd = args.array(fn, 'x', x, level), args.array(fn, 'W', W, level)
  return xd, Wd, b ~= nil and args.array(fn, 'b', b, level) or nil
end

-- The checks convolution_nd.lua and deconvolution_nd.lua share: x, W and b
-- (b may be nil) as tensors, x with
-- `want_nsp` spatial axes (nil: any >= 1), W of x's rank (`w_axes` names
-- its axes), float x and W of one dtype, a positive integer `groups`.  Returns xd, Wd, bd, nsp, groups.  Errors are raised at the
-- level of the caller of the public function (it calls the caller of this).
function M.conv_args(fn, want_nsp, x, W, b, opts, w_axes)
  local level = 4
  local xd, Wd, bd = M.x_W_b(fn, x, W, b, level - 1)
  local nd = xd.ptr.nd
  local nsp = nd - 2
  if want_nsp and nsp ~= want_nsp then
    error(string.format('%s: x must be %d-d (N, C, %s), got shape %s', fn, want_nsp + 2,
      want_nsp == 1 and 'W' or want_nsp == 2 and 'H, W' or 'D, H, W', T.shape_str(xd.shape)), level)
  end
  if nsp < 1 then
    error(string.format('%s: x must have a batch, a channel and at least one spatial axis, got shape %s', fn,
      T.shape_str(xd.shape)), level)
  end
  if Wd.ptr.nd ~= nd then
    error(string.format('%s: W must be %d-d (%s) like x, got shape %s', fn, nd, w_axes, T.shape_str(Wd.shape)),
      level)
  end
  if not T.is_float_dtype(xd.dtype) then
    error(string.format('%s: x must be floating point (got %s)', fn, xd.dtype), level)
  end
  if Wd.dtype ~= xd.dtype then
    error(string.format('%s: x and W have different dtypes (%s and %s)', fn, xd.dtype, Wd.dtype), level)
  end
  local groups = opts.groups or 1
  if type(groups) ~= 'number' or groups < 1 or groups ~= math.floor(groups) then
    error(string.format('%s: groups must be a positive integer (got %s)', fn, tostring(groups)), level)
  end
  return xd, Wd, bd, nsp, groups
end

-- Checks a (de)convolution's bias bd: shape (cout,) and x's dtype; `why`
-- says where cout comes from.  Errors blame the caller of the public
-- function (it calls the caller of this).
function M.check_bias(fn, bd, xd, cout, why)
  if bd.ptr.nd ~= 1 or bd.shape[1] ~= cout then
    error(string.format('%s: b must have shape (%d,) %s, got %s', fn, cout, why, T.shape_str(bd.shape)), 4)
  end
  if bd.dtype ~= xd.dtype then
    error(string.format('%s: x and b have different dtypes (%s and %s)', fn, xd.dtype, bd.dtype), 4)
  end
end

-- The stride, pad and dilate options of a (de)convolution as arrays of nsp
-- integers; errors blame the caller of the public function.
function M.window_tuples(fn, opts, nsp)
  return Window.tuple(fn, 'stride', opts.stride, nsp, 1, 1, 4),
    Window.tuple(fn, 'pad', opts.pad, nsp, 0, 0, 4),
    Window.tuple(fn, 'dilate', opts.dilate, nsp, 1, 1, 4)
end

-- The public front door `name` of a (de)convolution: splits Chainer's
-- positional arguments by `signature`, then calls body(name, nsp, x, W, b,
-- opts) (nsp: the number of spatial axes required, nil for any).
function M.front_door(name, nsp, signature, body)
  return function(x, W, b, ...)
    local opts
    b, opts = M.split_args(name, b, signature, ...)
    return body(name, nsp, x, W, b, opts)
  end
end

function M.i64(slot, t)
  local b = bufs[slot]
  for i = 1, #t do b[i - 1] = t[i] end
  return b
end

-- Splits (b, Chainer's positional arguments..., options) for the functions
-- whose bias b is optional; b may be left out in front of the options table
-- (F.f(x, W, {stride = 2})).  Returns b and the arguments by name, checked
-- against `signature` (an args.signature); errors blame the caller of the
-- public function.  No allocation when only an options table (or nothing)
-- follows the tensors.
function M.split_args(fn, b, signature, ...)
  if args.is_options(b) then return nil, args.options(fn, b, signature, 3) end
  if select('#', ...) == 0 then return b, args.EMPTY end
  return b, args.parse_at(3, fn, signature, select('#', ...), ...)
end

return M
