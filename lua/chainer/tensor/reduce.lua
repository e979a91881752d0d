-- tensor/reduce.lua: reductions (sum, mean, max, argmax, var, logsumexp, ...),
-- cumulative sums/products and sum_to (the gradient of broadcasting).
--
-- opts is nil (reduce everything), an axis number, a list of axes, or a table
-- {axis = n | {n, m}, keepdims = bool, ddof = n}.  Reducing every axis gives
-- a 0-d tensor (t:sum():item() is the Lua number).
local M = require 'chainer.tensor.core'
local ffi, C = M.ffi, M.C
local wrap, box, is_tensor, axes_arg, shape_arg = M.wrap, M.box, M.is_tensor, M.axes_arg, M.shape_arg
local methods = M.methods
local type, error = type, error

local function fail(level)
  error(ffi.string(C.ch_last_error()), level + 1)
end

local reduce_ops = M.ops.reduce_op   -- name -> C code, from the op list
M.reduce_ops = reduce_ops

local function make_reduce(op, name)
  return function(x, opts)
    if not is_tensor(x) then
      if type(x) == 'table' or type(x) == 'number' or type(x) == 'boolean' then
        x = M.array(x, type(x) == 'boolean' and 'bool' or nil)
      else
        error(string.format('%s: expected a tensor (got %s)', name, type(x)), 2)
      end
    end
    local n, axes, keepdims, ddof = 0, nil, 0, 0
    local to = type(opts)
    if to == 'number' then
      n, axes = axes_arg(opts, name)
    elseif to == 'table' then
      local axis = opts.axis
      if axis == nil and opts[1] ~= nil then axis = opts end
      if axis ~= nil then n, axes = axes_arg(axis, name) end
      if opts.keepdims then keepdims = 1 end
      if opts.ddof ~= nil then ddof = opts.ddof end
    elseif opts ~= nil then
      error(string.format('%s: opts must be an axis, a list of axes or an options table (got %s)', name, to), 2)
    end
    if C.ch_reduce(op, x.ptr, axes, n, keepdims, ddof, box) ~= 0 then fail(2) end
    return wrap(box[0])
  end
end

for name, op in pairs(reduce_ops) do
  local f = make_reduce(op, name)
  M[name] = f
  methods[name] = f
end
M.amax, M.amin = M.max, M.min
methods.amax, methods.amin = M.max, M.min

-- cumsum(x, [axis]) / cumprod(x, [axis]); no axis: over the flattened tensor.
local function make_cumulative(fname, name)
  return function(x, axis)
    if not is_tensor(x) then error(string.format('%s: expected a tensor (got %s)', name, type(x)), 2) end
    if axis == nil then
      x = x:reshape(-1)
      axis = 0
    elseif type(axis) ~= 'number' then
      error(string.format('%s: axis must be an integer or nil (got %s)', name, type(axis)), 2)
    end
    if C[fname](x.ptr, axis, box) ~= 0 then fail(2) end
    return wrap(box[0])
  end
end
M.cumsum = make_cumulative('ch_cumsum', 'cumsum')
M.cumprod = make_cumulative('ch_cumprod', 'cumprod')
methods.cumsum, methods.cumprod = M.cumsum, M.cumprod

-- sum_to(x, shape): sums x down to `shape` (the inverse of broadcasting).
-- Returns x itself when it already has that shape.
function M.sum_to(x, shape)
  if not is_tensor(x) then error(string.format('sum_to: expected a tensor (got %s)', type(x)), 2) end
  local n, s = shape_arg(shape, 'sum_to')
  if C.ch_sum_to(x.ptr, n, s, box) ~= 0 then fail(2) end
  local r = box[0]
  if r == x.ptr then
    C.ch_tensor_release(r)   -- the C call handed back x with a new reference
    return x
  end
  return wrap(r)
end
methods.sum_to = M.sum_to

return M
