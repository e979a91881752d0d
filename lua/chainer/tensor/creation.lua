-- tensor/creation.lua: new tensors (empty, zeros, ones, full, ranges, eye,
-- buffers), element access and conversion back to Lua values.
local M = require 'chainer.tensor.core'
local ffi, C, check = M.ffi, M.C, M.check
local wrap, box, shape_arg, dtype_code, device_id = M.wrap, M.box, M.shape_arg, M.dtype_code, M.device_id
local methods = M.methods
local DT = M.DT

local function default_dtype(dtype, fn) return dtype_code(dtype or M.default_float, fn) end

-- empty/zeros/ones(shape, [dtype], [device]): shape is a table ({3, 4}) or
-- leading numbers (3, 4); dtype defaults to chainer.config.dtype (float32).
function M.empty(...)
  local shape, dtype, device = M.dims(...)
  local n, s = shape_arg(shape, 'empty')
  check(C.ch_empty(default_dtype(dtype, 'empty'), n, s, device_id(device), box), 2)
  return wrap(box[0])
end

-- (always tail-called, so error level 2 is the user's call)
local function fill(fn, shape, value, dtype, device)
  if type(value) == 'boolean' then value = value and 1 or 0 end
  if type(value) ~= 'number' then
    error(string.format('%s: fill value must be a number (got %s)', fn, type(value)), 2)
  end
  local n, s = shape_arg(shape, fn)
  check(C.ch_full(default_dtype(dtype, fn), n, s, value, device_id(device), box), 2)
  return wrap(box[0])
end

-- full(shape, value, [dtype], [device]): as in NumPy and torch the shape is
-- one argument (a table, or a number for 1-d), so full(3, 7) is seven
-- repeated three times; full(3, 4, 7) is refused rather than guessed.
function M.full(shape, value, dtype, device)
  if type(dtype) == 'number' and type(shape) == 'number' then
    error(string.format('full: the shape is one table followed by the fill value, as in full({%s, %s}, %s) ' ..
      '(got a number, %s, where the dtype goes)', tostring(shape), tostring(value), tostring(dtype),
      tostring(dtype)), 2)
  end
  return fill('full', shape, value, dtype, device)
end

function M.zeros(...)
  local shape, dtype, device = M.dims(...)
  return fill('zeros', shape, 0, dtype, device)
end
function M.ones(...)
  local shape, dtype, device = M.dims(...)
  return fill('ones', shape, 1, dtype, device)
end

-- *_like(x, [dtype]): same shape and device as x, dtype of x unless given.
function M.empty_like(x, dtype) return M.empty(x.shape, dtype or x.dtype, x.ptr.dev) end
function M.zeros_like(x, dtype) return M.full(x.shape, 0, dtype or x.dtype, x.ptr.dev) end
function M.ones_like(x, dtype) return M.full(x.shape, 1, dtype or x.dtype, x.ptr.dev) end
function M.full_like(x, value, dtype) return M.full(x.shape, value, dtype or x.dtype, x.ptr.dev) end

-- arange(stop) / arange(start, stop, [step], [dtype]); dtype defaults to
-- int64 when every argument is integral, float32 otherwise.
function M.arange(a, b, step, dtype, device)
  if type(step) == 'string' then step, dtype, device = nil, step, dtype end
  if type(b) == 'string' then b, dtype, device = nil, b, step end
  local start, stop = a, b
  if stop == nil then start, stop = 0, a end
  step = step or 1
  if dtype == nil then
    local integral = start == math.floor(start) and stop == math.floor(stop) and step == math.floor(step)
    dtype = integral and 'int64' or M.default_float
  end
  check(C.ch_arange(start, stop, step, dtype_code(dtype, 'arange'), device_id(device), box), 2)
  return wrap(box[0])
end

-- linspace(start, stop, num = 50, {endpoint = true, dtype =})
function M.linspace(start, stop, num, opts)
  opts = opts or {}
  local endpoint = opts.endpoint ~= false
  check(C.ch_linspace(start, stop, num or 50, endpoint and 1 or 0, default_dtype(opts.dtype, 'linspace'),
    device_id(opts.device), box), 2)
  return wrap(box[0])
end

-- eye(n, [m], [k], [dtype]); identity(n, [dtype])
function M.eye(n, m, k, dtype, device)
  if type(m) == 'string' then m, k, dtype = nil, nil, m end
  if type(k) == 'string' then k, dtype = nil, k end
  check(C.ch_eye(n, m or -1, k or 0, default_dtype(dtype, 'eye'), device_id(device), box), 2)
  return wrap(box[0])
end
function M.identity(n, dtype, device) return M.eye(n, n, 0, dtype, device) end

-- Copies `count` elements from a raw pointer (C order) into a new tensor.
function M.from_buffer(ptr, shape, dtype)
  local n, s = shape_arg(shape, 'from_buffer')
  check(C.ch_from_buffer(dtype_code(dtype, 'from_buffer'), n, s, ffi.cast('const void*', ptr), box), 2)
  return wrap(box[0])
end

-- Takes a new reference on a ch_tensor* owned elsewhere (host programs).
function M.from_pointer(ptr)
  if ptr == nil then error('from_pointer: NULL tensor pointer', 2) end
  return M.wrap_borrowed(ffi.cast('ch_tensor*', ptr))
end

---------------------------------------------------------------------------
-- element access
---------------------------------------------------------------------------
-- Flat C-order position of 0-based indices (i, j, ...).
local function flat_position(t, fn, ...)
  local p = t.ptr
  local n = select('#', ...)
  if n ~= p.nd then
    error(string.format('%s: expected %d indices for a %d-d tensor (got %d)', fn, p.nd, p.nd, n), 3)
  end
  local pos = 0
  for k = 1, n do
    local i = select(k, ...)
    local d = tonumber(p.dim[k - 1])
    if type(i) ~= 'number' or i ~= math.floor(i) then
      error(string.format('%s: index %d must be an integer (got %s)', fn, k, tostring(i)), 3)
    end
    if i < -d or i >= d then
      error(string.format('%s: index %d is out of bounds for axis %d with size %d', fn, i, k - 1, d), 3)
    end
    if i < 0 then i = i + d end
    pos = pos * d + i
  end
  return pos
end

local dbox = ffi.new('double[1]')
local ibox = ffi.new('int64_t[1]')

local function read_flat(t, pos)
  local p = t.ptr
  if p.dt == DT.bool then
    check(C.ch_get_flat(p, pos, dbox), 3)
    return dbox[0] ~= 0
  elseif p.dt == DT.int64 then
    check(C.ch_get_flat_i64(p, pos, ibox), 3)
    return tonumber(ibox[0])
  end
  check(C.ch_get_flat(p, pos, dbox), 3)
  return dbox[0]
end

-- t:get(i, j, ...) reads one element (0-based indices).
function methods.get(t, ...)
  if t.ptr.dev ~= -1 then return t:to_cpu():get(...) end
  return read_flat(t, flat_position(t, 'get', ...))
end

-- t:set(i, j, ..., value) writes one element.
function methods.set(t, ...)
  local args = { ... }
  local n = select('#', ...)
  local v = args[n]
  if type(v) == 'boolean' then v = v and 1 or 0 end
  if type(v) ~= 'number' then
    error(string.format('set: the value must be a number (got %s)', type(v)), 2)
  end
  local pos = flat_position(t, 'set', unpack(args, 1, n - 1))
  check(C.ch_set_flat(t.ptr, pos, v), 2)
  return t
end

-- The single element of a 1-element tensor as a Lua number (boolean for bool).
function methods.item(t)
  local p = t.ptr
  if p.numel ~= 1 then
    error(string.format('item: only a tensor with exactly one element can be converted to a Lua number ' ..
      '(this one has shape %s)', M.shape_str(t.shape)), 2)
  end
  if p.dev ~= -1 then t = t:to_cpu() end
  return read_flat(t, 0)
end

-- Nested Lua tables (numbers for a 0-d tensor).
function methods.totable(t)
  if t.ptr.dev ~= -1 then t = t:to_cpu() end
  local c = t:contiguous()
  local p = c.ptr
  local shape = M.shape_of(p)
  local nd = #shape
  if nd == 0 then return read_flat(c, 0) end
  -- a freed tensor still has its shape but no data: reading would crash
  if p.data == nil and p.numel > 0 then
    error('totable: the tensor was freed (tensor:free() was called on it)', 2)
  end
  local data = ffi.cast(M.ctypes[p.dt] .. '*', C.ch_tensor_ptr(p))
  local dt = p.dt
  local conv
  if dt == DT.bool then conv = function(x) return x ~= 0 end
  elseif dt == DT.int64 then conv = tonumber
  elseif dt == DT.float16 then conv = function(x) return C.ch_half_to_float(x) end
  else conv = function(x) return x end end
  local pos = 0
  local function build(depth)
    local out = {}
    local n = shape[depth]
    if depth == nd then
      for i = 1, n do out[i] = conv(data[pos]); pos = pos + 1 end
    else
      for i = 1, n do out[i] = build(depth + 1) end
    end
    return out
  end
  local out = build(1)
  -- keep c alive until the data pointer is no longer used
  local _ = c.ptr
  return out
end

-- Flat Lua array of every element (C order).
function methods.tolist(t)
  local flat = t:reshape(-1):totable()
  return flat
end

-- Drops this tensor's hold on its memory now instead of at garbage collection.
function methods.free(t)
  C.ch_tensor_free_storage(t.ptr)
end

function M.shape_str(shape)
  local parts = {}
  for i = 1, #shape do parts[i] = tostring(shape[i]) end
  if #shape == 1 then return '(' .. parts[1] .. ',)' end
  return '(' .. table.concat(parts, ', ') .. ')'
end

return M
