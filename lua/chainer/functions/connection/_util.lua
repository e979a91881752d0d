-- functions/connection/_util.lua: argument helpers shared by the
-- connection functions (not exported into F).
local ffi = require 'ffi'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'

local M = {}

local as_array, is_tensor = Variable.as_array, T.is_tensor

-- A plain Lua table (an options table), as opposed to a Variable/tensor.
local function is_plain(v) return type(v) == 'table' and getmetatable(v) == nil end
M.is_plain = is_plain

-- The tensor of a Variable or tensor argument; errors name fn and arg.
function M.data(fn, name, v, level)
  local d = as_array(v)
  if not is_tensor(d) then
    error(string.format('%s: %s must be a Variable or a tensor (got %s)', fn, name, type(v)), (level or 2) + 1)
  end
  return d
end

-- The checks convolution_nd.lua and deconvolution_nd.lua share: x, W and b
-- (b may be nil) as tensors, the options against `known`, x with
-- `want_nsp` spatial axes (nil: any >= 1), W of x's rank (`w_axes` names
-- its axes), float x and W of one dtype, a positive integer `groups`.  Returns xd, Wd, bd, nsp, groups.  Errors are raised at the
-- level of the caller of the public function (it calls the caller of this).
function M.conv_args(fn, want_nsp, x, W, b, opts, known, w_axes)
  local level = 4
  local xd = M.data(fn, 'x', x, level)
  local Wd = M.data(fn, 'W', W, level)
  local bd = b ~= nil and M.data(fn, 'b', b, level) or nil
  M.check_opts(fn, opts, known, level)
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

-- An int or an n-tuple -> Lua array of n integers.
function M.tuple(fn, name, v, n, default, min)
  if v == nil or v == false then v = default end
  local out = {}
  if type(v) == 'number' then
    for i = 1, n do out[i] = v end
  elseif type(v) == 'table' and #v == n then
    for i = 1, n do out[i] = v[i] end
  else
    error(string.format('%s: %s must be an integer or a table of %d integers (got %s)', fn, name, n,
      type(v) == 'table' and ('a table of ' .. #v) or tostring(v)), 4)
  end
  for i = 1, n do
    local x = out[i]
    if type(x) ~= 'number' or x ~= math.floor(x) or (min and x < min) then
      error(string.format('%s: %s must hold integers%s (got %s)', fn, name,
        min and (' >= ' .. min) or '', tostring(x)), 4)
    end
  end
  return out
end

-- Chainer's get_conv_outsize / get_deconv_outsize.
function M.conv_outsize(size, k, s, p, cover_all, d)
  local dk = k + (k - 1) * (d - 1)
  if cover_all then return math.floor((size + p * 2 - dk + s - 1) / s) + 1 end
  return math.floor((size + p * 2 - dk) / s) + 1
end

function M.deconv_outsize(size, k, s, p, cover_all, d)
  local dk = (k - 1) * d + 1
  if cover_all then return s * (size - 1) + dk - s + 1 - 2 * p end
  return s * (size - 1) + dk - 2 * p
end

-- Reusable int64 argument buffers for the C kernels.
local bufs = {}
for i = 1, 5 do bufs[i] = ffi.new('int64_t[16]') end
function M.i64(slot, t)
  local b = bufs[slot]
  for i = 1, #t do b[i - 1] = t[i] end
  return b
end

-- Splits (b, a1, a2, ..., opts) where b is an optional tensor argument, the
-- a's are Chainer's positional non-tensor arguments and opts a trailing
-- options table; an options table may come right after the tensors.
-- Returns b, opts (a fresh table holding the positional values under
-- `names`).
function M.split_args(fn, b, names, ...)
  local args = { ... }
  if is_plain(b) then
    -- F.f(x, W, {opts}): b omitted
    return nil, b
  end
  local opts
  local n = select('#', ...)
  local last = n
  while last > 0 and args[last] == nil do last = last - 1 end
  if last > 0 and is_plain(args[last]) and not (type(args[last][1]) == 'number' and last <= #names) then
    opts = args[last]
    last = last - 1
  end
  if last > #names then
    error(string.format('%s: too many positional arguments (expected at most %d after the tensors)', fn, #names), 3)
  end
  if last > 0 then
    local o = {}
    if opts then for k, v in pairs(opts) do o[k] = v end end
    for i = 1, last do
      if args[i] ~= nil then
        if o[names[i]] ~= nil and opts and opts[names[i]] ~= nil then
          error(string.format('%s: %s given both positionally and in the options', fn, names[i]), 3)
        end
        o[names[i]] = args[i]
      end
    end
    opts = o
  end
  if opts ~= nil and type(opts) ~= 'table' then
    error(string.format('%s: options must be a table (got %s)', fn, type(opts)), 3)
  end
  return b, opts or {}
end

-- Errors on option names the function does not know (typos).
function M.check_opts(fn, opts, known, level)
  for k in pairs(opts) do
    if not known[k] then
      local list = {}
      for n in pairs(known) do list[#list + 1] = n end
      table.sort(list)
      error(string.format("%s: unknown option '%s' (expected one of: %s)", fn, tostring(k), table.concat(list, ', ')), level or 3)
    end
  end
end

return M
