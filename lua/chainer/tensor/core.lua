-- tensor/core.lua: the Tensor type and the helpers every tensor module uses.
--
-- A Lua tensor is a tiny FFI struct `{ ch_tensor *ptr }` without a __gc:
-- tensor/registry.lua releases the C reference once the collector finds the
-- handle dead (see there why).  (A bare `ch_tensor *` would accept `t[1]` as
-- pointer arithmetic and read stray memory; a struct routes every unknown
-- key, numbers included, to __index.)  Other files in chainer/tensor/ add
-- functions to the namespace `M` and methods to `M.methods`.
local lib = require 'chainer._lib'
local ffi, C, check = lib.ffi, lib.C, lib.check

local M = {}            -- the chainer.tensor namespace
local methods = {}      -- t:method(...)
local props = {}        -- t.prop, computed on access
M.methods, M.props = methods, props
M.C, M.ffi, M.check = C, ffi, check

ffi.cdef [[ typedef struct ch_lua_tensor { ch_tensor *ptr; } ch_lua_tensor; ]]
local registry = require 'chainer.tensor.registry'
M.registry = registry

---------------------------------------------------------------------------
-- dtypes
---------------------------------------------------------------------------
-- Codes and names come from the op list (runtime/include/chainlua_ops.h,
-- generated into chainer._ops); DT.float32 is the code of float32.
local ops = require 'chainer._ops'
local DT = ops.dtype
M.ops, M.DT = ops, DT
local dtype_names = ops.dtype_names
local dtype_codes = {}
for name, code in pairs(DT) do dtype_codes[name] = code end
dtype_codes.half, dtype_codes.float, dtype_codes.single = DT.float16, DT.float32, DT.float32
dtype_codes.double, dtype_codes.int, dtype_codes.long = DT.float64, DT.int64, DT.int64
M.dtype_names = dtype_names
M.dtype_codes = dtype_codes
-- C element types, for reading data through ffi.cast.
M.ctypes = {
  [DT.bool] = 'uint8_t', [DT.int8] = 'int8_t', [DT.uint8] = 'uint8_t', [DT.int16] = 'int16_t',
  [DT.int32] = 'int32_t', [DT.int64] = 'int64_t', [DT.float16] = 'uint16_t', [DT.float32] = 'float',
  [DT.float64] = 'double',
}
-- Float codes (float16, float32, float64): is_float_code[t.ptr.dt].
local is_float_code = { [DT.float16] = true, [DT.float32] = true, [DT.float64] = true }
M.is_float_code = is_float_code

M.default_float = 'float32'   -- chainer.config.dtype overrides it at run time

-- The runtime's code of a dtype given by name ('float32', or an alias such as
-- 'double'); errors name `fn`.  Numbers are refused: the codes are an
-- internal detail, and a number where a dtype may go (zeros(3, 4)) is a
-- dimension in every creation function.
local DTYPE_LIST = 'bool, int8, uint8, int16, int32, int64, float16, float32, float64'
local function dtype_code(d, fn)
  local c = dtype_codes[d]
  if c then return c end
  if type(d) == 'number' then
    error(string.format("%s: dtype must be a name such as 'float32' or 'int64' (got the number %s; " ..
      "pass one of %s)", fn or 'dtype', tostring(d), DTYPE_LIST), 3)
  end
  error(string.format("%s: unknown dtype %s (expected one of %s)", fn or 'dtype', tostring(d), DTYPE_LIST), 3)
end
M.dtype_code = dtype_code
function M.dtype_name(d) return dtype_names[dtype_code(d)] end
function M.is_float_dtype(d) return is_float_code[dtype_code(d)] == true end

---------------------------------------------------------------------------
-- devices: 'cpu' / -1 and 'cuda:N' / N
---------------------------------------------------------------------------
local function device_id(d, fn)
  if d == nil or d == 'cpu' or d == '@numpy' or d == -1 then return -1 end
  if type(d) == 'number' and d >= 0 and d == math.floor(d) then return d end
  if type(d) == 'string' then
    local n = d:match('^cuda:(%d+)$') or d:match('^@cupy:(%d+)$') or d:match('^gpu:(%d+)$')
    if n then return tonumber(n) end
  end
  if type(d) == 'table' and d.id then return d.id end
  error(string.format("%s: unknown device %s (expected 'cpu', 'cuda:N', -1 or N)", fn or 'device', tostring(d)), 3)
end
M.device_id = device_id
function M.device_name(id) return id < 0 and 'cpu' or ('cuda:' .. id) end

---------------------------------------------------------------------------
-- the Tensor type, wrapping and garbage-collector pacing
---------------------------------------------------------------------------
local Tensor -- ctype, set below
local handle_type = ffi.typeof('ch_lua_tensor')

-- The Lua GC does not see memory held by C.  After each new tensor we look at
-- the runtime's live bytes and run a full collection when they have grown by
-- more than an allowance past the smallest count seen since the last
-- collection, so garbage tensors never pile up.  The allowance is `gc_floor`,
-- or four times the Lua heap when that is larger: a collection's cost is the
-- traversal of the Lua heap, whatever the garbage, so this bounds the GC time
-- per byte of tensor garbage, while the memory kept for garbage no longer
-- grows with what is live (a dataset of 200 MB held for a whole run does not
-- license 200 MB of dead batches on top).  Following the smallest count, not
-- the count right after the last collection, lets the threshold come down
-- when a large live set (a model) is dropped between our collections.
--
-- A second, smaller allowance applies once the cache has run dry: the live
-- bytes have grown by `fresh_allowance` since the last collection and some
-- block has had to come from the system since then (ch_fresh_bytes counts
-- them).  Every fresh page faults when first touched, while the collection
-- hands the dead blocks back to the cache for the next results to reuse: a
-- loop of large products stops taking new memory after a few calls instead
-- of after `gc_floor` bytes.  The fresh allowance is 4 MiB or four times the
-- Lua heap: a collection costs about 0.6 ns per byte of heap and a fresh page
-- 0.1-0.15 ns per byte on a bare host (2-6 ns on a VM, where a fresh 4 MiB
-- block took 10-25 ms against ~1 ms to collect a 2 MB heap), so even a live
-- set that only grows (a dataset being loaded) pays at most about as much
-- for these collections as for its page faults, and a loop that the cache
-- serves never pays for them.
local gc_floor = 48 * 1024 * 1024
local fresh_floor = 4 * 1024 * 1024
local gc_allowance = gc_floor
local fresh_allowance = fresh_floor
local gc_base = 0                -- smallest live bytes since the last collection
local gc_threshold = gc_floor
local fresh_check_at = fresh_floor -- live bytes from which a cache miss collects
local fresh_at_collect = 0       -- ch_fresh_bytes() at the last collection
local live_bytes = C.ch_live_bytes
local fresh_bytes = C.ch_fresh_bytes
-- registry.collect() is a full collection followed by the release of the
-- tensors it found dead, so the live bytes read below have dropped.  (It
-- runs interpreted, jit.off: collectgarbage ends a trace anyway.)
local collect = registry.collect
local overdue = registry.overdue
local function collect_now()
  collect()
  local heap = 1024 * collectgarbage('count')
  gc_allowance = math.max(gc_floor, 4 * heap)
  fresh_allowance = math.max(fresh_floor, 4 * heap)
  gc_base = tonumber(live_bytes(-1))
  gc_threshold = gc_base + gc_allowance
  fresh_check_at = gc_base + fresh_allowance
  fresh_at_collect = tonumber(fresh_bytes())
end
jit.off(collect_now)
local function pace_gc()
  local live = tonumber(live_bytes(-1))
  if live < gc_base then
    gc_base = live
    gc_threshold = live + gc_allowance
    fresh_check_at = live + fresh_allowance
  elseif live > gc_threshold then
    collect_now()
  elseif live >= fresh_check_at and tonumber(fresh_bytes()) > fresh_at_collect then
    -- grown by the fresh allowance, and the cache has run dry
    collect_now()
  elseif overdue() then
    -- many tensors made since the collector last found the dead ones
    -- (registry.lua: R.overdue)
    collect_now()
  end
end
M.pace_gc = pace_gc
function M.set_gc_floor(bytes)
  gc_floor = bytes
  gc_allowance = math.max(bytes, 4 * 1024 * collectgarbage('count'))
  gc_threshold = gc_base + gc_allowance
end

-- Takes ownership of a new C reference and returns the Lua tensor.
local track = registry.track
local function wrap(ptr)
  local t = Tensor(ptr)
  track(t, ptr)
  pace_gc()
  return t
end
M.wrap = wrap

-- Wraps a pointer the caller does not own (takes a new reference).
function M.wrap_borrowed(ptr)
  C.ch_tensor_retain(ptr)
  return wrap(ptr)
end

-- (not a tail call: LuaJIT counts tail calls against a trace's loop-unroll
-- limit, and is_tensor is called on every operator path)
local istype = ffi.istype
local function is_tensor(v) local r = istype(handle_type, v) return r end
M.is_tensor = is_tensor

-- One reusable out-parameter for C calls that return a tensor.
local box = ffi.new('ch_tensor*[1]')
M.box = box

-- Scratch arrays for shapes and axes (valid until the next call).
local shape_buf = ffi.new('int64_t[16]')
local shape_buf2 = ffi.new('int64_t[16]')
local axes_buf = ffi.new('int32_t[16]')

-- Converts a Lua shape ({2, 3}, or a number for 1-D) into (n, int64_t*).
local function shape_arg(shape, fn, buf)
  buf = buf or shape_buf
  if type(shape) == 'number' then
    buf[0] = shape
    return 1, buf
  end
  if is_tensor(shape) then shape = shape:totable() end
  if type(shape) ~= 'table' then
    error(string.format('%s: shape must be a table of integers (got %s)', fn or 'shape', type(shape)), 3)
  end
  local n = #shape
  if n > 16 then error(string.format('%s: at most 16 dimensions (got %d)', fn or 'shape', n), 3) end
  for i = 1, n do
    local d = shape[i]
    if type(d) ~= 'number' or d ~= math.floor(d) then
      error(string.format('%s: shape entry %d must be an integer (got %s)', fn or 'shape', i, tostring(d)), 3)
    end
    buf[i - 1] = d
  end
  return n, buf
end
M.shape_arg = shape_arg
M.shape_buf2 = shape_buf2

-- Creation functions take a shape as a table ({3, 4}) or as leading numbers
-- (3, 4), as torch and NumPy's random functions do: dims(3, 4, 'int32')
-- returns {3, 4}, 'int32'.  A single number stays a number (1-d), a table
-- is returned as it is, and whatever follows the numbers is returned after
-- the shape.
local function collect_dims(shape, n, ...)
  local k = 1
  while k <= n and type((select(k, ...))) == 'number' do
    shape[#shape + 1] = (select(k, ...))
    k = k + 1
  end
  return shape, select(k, ...)
end
function M.dims(first, ...)
  if type(first) ~= 'number' or type((...)) ~= 'number' then return first, ... end
  return collect_dims({ first }, select('#', ...), ...)
end

-- Converts an axis or a table of axes into (n, int32_t*); nil gives (0, nil).
local function axes_arg(axes, fn)
  if axes == nil then return 0, nil end
  if type(axes) == 'number' then
    axes_buf[0] = axes
    return 1, axes_buf
  end
  if type(axes) ~= 'table' then
    error(string.format('%s: axis must be an integer or a table of integers (got %s)', fn or 'axis', type(axes)), 3)
  end
  for i = 1, #axes do axes_buf[i - 1] = axes[i] end
  return #axes, axes_buf
end
M.axes_arg = axes_arg

-- Reads the shape of a C tensor into a fresh Lua table.
local function shape_of(p)
  local s = {}
  for i = 0, p.nd - 1 do s[i + 1] = tonumber(p.dim[i]) end
  return s
end
M.shape_of = shape_of

---------------------------------------------------------------------------
-- properties
---------------------------------------------------------------------------
function props.shape(t) return shape_of(t.ptr) end
function props.dtype(t) return dtype_names[t.ptr.dt] end
function props.ndim(t) return t.ptr.nd end
function props.size(t) return tonumber(t.ptr.numel) end
function props.device(t) return M.device_name(t.ptr.dev) end
function props.itemsize(t) return tonumber(C.ch_dtype_size(t.ptr.dt)) end
function props.nbytes(t) return tonumber(t.ptr.numel) * tonumber(C.ch_dtype_size(t.ptr.dt)) end
function props.strides(t)
  local p, s = t.ptr, {}
  for i = 0, p.nd - 1 do s[i + 1] = tonumber(p.stride[i]) end
  return s
end
function props.T(t) return t:transpose() end
function props.is_contiguous(t) return C.ch_is_contiguous(t.ptr) ~= 0 end

local index_error = 'tensor: t[%s] is not supported; positions are 0-based and read with ' ..
  't:get(i, j, ...), sub-tensors with t:slice{...} or t:select(i) (see docs/tensor.md)'

local mt = {
  __index = function(t, k)
    local m = methods[k]
    if m ~= nil then return m end
    local p = props[k]
    if p ~= nil then
      local v = p(t)
      return v   -- (not a tail call: see is_tensor below)
    end
    if type(k) == 'number' then error(string.format(index_error, k), 2) end
    return nil
  end,
  __newindex = function(_, k)
    error(string.format("tensor: cannot set field '%s' (use t:set(...) or t:copy_(src) to change values)",
      tostring(k)), 2)
  end,
  __len = function(t)
    local p = t.ptr
    if p.nd == 0 then error('tensor: len() of a 0-d tensor', 2) end
    return tonumber(p.dim[0])
  end,
  __tostring = function(t) return M.tostring(t) end,
  -- arithmetic operators are routed through the namespace so that the
  -- elementwise module can define them after this file loads
  __add = function(a, b) return M.add(a, b) end,
  __sub = function(a, b) return M.sub(a, b) end,
  __mul = function(a, b) return M.mul(a, b) end,
  __div = function(a, b) return M.div(a, b) end,
  __mod = function(a, b) return M.mod(a, b) end,
  __pow = function(a, b) return M.pow(a, b) end,
  __unm = function(a) return M.neg(a) end,
  __concat = function(a, b) return tostring(a) .. tostring(b) end,
}
Tensor = ffi.metatype(handle_type, mt)
M.Tensor = Tensor

---------------------------------------------------------------------------
-- conversion of Lua values into tensors
---------------------------------------------------------------------------
-- Walks a nested Lua table, returning its shape and a flat list of values.
local function nested_shape(v, fn)
  local shape = {}
  local x = v
  while type(x) == 'table' and not is_tensor(x) do
    shape[#shape + 1] = #x
    if #x == 0 then break end
    x = x[1]
  end
  local flat, n = {}, 0
  local function walk(node, depth)
    if depth > #shape then
      n = n + 1
      flat[n] = node
      return
    end
    if type(node) ~= 'table' or #node ~= shape[depth] then
      error(string.format('%s: ragged nested table (expected %d entries at depth %d)', fn, shape[depth], depth), 4)
    end
    for i = 1, shape[depth] do walk(node[i], depth + 1) end
  end
  walk(v, 1)
  return shape, flat, n
end

-- Tensor from a nested Lua table, a number or a boolean.  Lua cannot tell
-- 1 from 1.0, so numbers default to chainer.config.dtype (float32), booleans
-- to bool; pass a dtype for integer tensors.
function M.array(v, dtype, device)
  if is_tensor(v) then
    local t = dtype and v:astype(dtype) or v:copy()
    return device and t:to_device(device) or t
  end
  local shape, flat, n = nested_shape(v, 'array')
  if dtype == nil then
    dtype = (n > 0 and type(flat[1]) == 'boolean') and 'bool' or M.default_float
  end
  local code = dtype_code(dtype, 'array')
  local nd, sbuf = shape_arg(shape, 'array')
  check(C.ch_empty(code, nd, sbuf, -1, box), 2)
  local t = wrap(box[0])
  local p = t.ptr
  if code == 5 then
    local d = ffi.cast('int64_t*', p.data)
    for i = 1, n do
      local x = flat[i]
      if type(x) ~= 'number' then
        if type(x) == 'boolean' then x = x and 1 or 0
        elseif ffi.istype('int64_t', x) or ffi.istype('uint64_t', x) then -- exact 64-bit ints
        else error(string.format('array: element %d is a %s (expected a number)', i, type(x)), 2) end
      end
      d[i - 1] = x
    end
  elseif code == DT.float32 or code == DT.float64 then
    local d = ffi.cast(M.ctypes[code] .. '*', p.data)
    for i = 1, n do
      local x = flat[i]
      if type(x) ~= 'number' then
        if type(x) == 'boolean' then x = x and 1 or 0
        else error(string.format('array: element %d is a %s (expected a number)', i, type(x)), 2) end
      end
      d[i - 1] = x
    end
  else
    for i = 1, n do
      local x = flat[i]
      if type(x) == 'boolean' then x = x and 1 or 0 end
      if type(x) ~= 'number' then
        error(string.format('array: element %d is a %s (expected a number)', i, type(x)), 2)
      end
      C.ch_set_flat(p, i - 1, x)
    end
  end
  if device and device_id(device) ~= -1 then return t:to_device(device) end
  return t
end
M.tensor = M.array

-- Returns v as a tensor: tensors pass through, Lua values are converted.
function M.as_tensor(v, dtype)
  if is_tensor(v) then
    if dtype and v.ptr.dt ~= dtype_code(dtype) then return v:astype(dtype) end
    return v
  end
  return M.array(v, dtype)
end

-- The tensor function of a one-input C kernel ch_X(x, &out) (trace, inv,
-- det, ...): x as a tensor in, the kernel's new tensor out, its error at the
-- caller's line.
function M.unary_kernel(kernel)
  return function(x)
    x = M.as_tensor(x)
    check(kernel(x.ptr, box), 2)
    return wrap(box[0])
  end
end

-- The same for a two-input kernel ch_X(a, b, &out) (dot, outer, solve).
function M.binary_kernel(kernel)
  return function(a, b)
    a, b = M.as_tensor(a), M.as_tensor(b)
    check(kernel(a.ptr, b.ptr, box), 2)
    return wrap(box[0])
  end
end

return M
