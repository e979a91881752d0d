-- tensor/join.lua: joining, splitting and rearranging tensors
-- (concatenate, stack, hstack/vstack/dstack, split, roll, tile, repeat, pad).
-- Kernels: runtime/cpu/join.c.
local M = require 'chainer.tensor.core'
local ffi, C, check = M.ffi, M.C, M.check
local wrap, box, as_tensor, is_tensor = M.wrap, M.box, M.as_tensor, M.is_tensor
local methods = M.methods

-- (n, ch_tensor*[n], keep-alive list) from a Lua array of tensors.
local function tensor_list(list, fn)
  if type(list) ~= 'table' or is_tensor(list) then
    error(string.format('%s: expected a Lua array of tensors (got %s)', fn, is_tensor(list) and 'a tensor' or type(list)), 3)
  end
  local n = #list
  local arr = ffi.new('ch_tensor*[?]', n > 0 and n or 1)
  local keep = {}
  for i = 1, n do
    local t = as_tensor(list[i])
    keep[i] = t
    arr[i - 1] = t.ptr
  end
  return n, arr, keep
end

-- The tensor function of a joining kernel ch_X(tensors, n, axis, &out).
local function joining(kernel, fn)
  return function(list, axis)
    local n, arr, keep = tensor_list(list, fn)
    check(kernel(arr, n, axis or 0, box), 2)
    local r = wrap(box[0])
    keep[1] = nil   -- the inputs stay alive until the kernel has run
    return r
  end
end

-- concatenate({a, b, ...}, axis = 0)
M.concatenate = joining(C.ch_concatenate, 'concatenate')
M.concat = M.concatenate

-- stack({a, b, ...}, axis = 0): joins equal-shaped tensors along a new axis.
M.stack = joining(C.ch_stack, 'stack')

local function map_list(list, fn, f)
  if type(list) ~= 'table' or is_tensor(list) then
    error(string.format('%s: expected a Lua array of tensors', fn), 3)
  end
  local out = {}
  for i = 1, #list do out[i] = f(as_tensor(list[i])) end
  return out
end

-- hstack: along axis 1 (axis 0 for 1-D tensors), like numpy.hstack.
function M.hstack(list)
  local ts = map_list(list, 'hstack', function(t) return t.ndim == 0 and t:reshape(1) or t end)
  local axis = (ts[1] and ts[1].ndim == 1) and 0 or 1
  return M.concatenate(ts, axis)
end

-- vstack: along axis 0 after making every tensor at least 2-D.
function M.vstack(list)
  local ts = map_list(list, 'vstack', function(t)
    if t.ndim == 0 then return t:reshape(1, 1) end
    if t.ndim == 1 then return t:reshape(1, t.size) end
    return t
  end)
  return M.concatenate(ts, 0)
end

-- dstack: along axis 2 after making every tensor at least 3-D.
function M.dstack(list)
  local ts = map_list(list, 'dstack', function(t)
    if t.ndim == 0 then return t:reshape(1, 1, 1) end
    if t.ndim == 1 then return t:reshape(1, t.size, 1) end
    if t.ndim == 2 then local s = t.shape return t:reshape(s[1], s[2], 1) end
    return t
  end)
  return M.concatenate(ts, 2)
end

local split_buf = ffi.new('int64_t[?]', 1024)

local function do_split(x, idx, axis, fn)
  local n = #idx
  local ibuf = n <= 1024 and split_buf or ffi.new('int64_t[?]', n)
  for i = 1, n do
    local v = idx[i]
    if type(v) ~= 'number' or v ~= math.floor(v) then
      error(string.format('%s: split index %d must be an integer (got %s)', fn, i, tostring(v)), 3)
    end
    ibuf[i - 1] = v
  end
  local res = ffi.new('ch_tensor*[?]', n + 1)
  check(C.ch_split(x.ptr, ibuf, n, axis, res), 3)
  local out = {}
  for i = 0, n do out[i + 1] = wrap(res[i]) end
  return out
end

local function axis_size(x, axis, fn)
  local nd = x.ndim
  if nd == 0 then error(fn .. ': cannot split a 0-d tensor', 3) end
  local a = M.norm_axis(axis, nd, fn)
  return x.shape[a + 1]
end

-- split(x, sections_or_indices, axis = 0): a Lua array of views.  A number
-- gives that many equal pieces (an error when the axis does not divide);
-- a table gives the 0-based positions where pieces start.
function M.split(x, ios, axis)
  x = as_tensor(x)
  axis = axis or 0
  if type(ios) == 'number' then
    local size = axis_size(x, axis, 'split')
    if ios ~= math.floor(ios) or ios <= 0 then
      error(string.format('split: the number of sections must be a positive integer (got %s)', tostring(ios)), 2)
    end
    if size % ios ~= 0 then
      error(string.format('split: axis %d of size %d does not divide into %d equal sections (use array_split)',
        axis, size, ios), 2)
    end
    local idx, step = {}, size / ios
    for i = 1, ios - 1 do idx[i] = i * step end
    return do_split(x, idx, axis, 'split')
  elseif type(ios) == 'table' then
    return do_split(x, ios, axis, 'split')
  end
  error(string.format('split: indices_or_sections must be a number or a table (got %s)', type(ios)), 2)
end
methods.split = M.split

-- array_split(x, sections, axis = 0): like split, but sections need not
-- divide the axis (the first size % sections pieces are one longer).
function M.array_split(x, ios, axis)
  x = as_tensor(x)
  axis = axis or 0
  if type(ios) ~= 'number' then return M.split(x, ios, axis) end
  if ios ~= math.floor(ios) or ios <= 0 then
    error(string.format('array_split: the number of sections must be a positive integer (got %s)', tostring(ios)), 2)
  end
  local size = axis_size(x, axis, 'array_split')
  local q, r = math.floor(size / ios), size % ios
  local idx, pos = {}, 0
  for i = 1, ios - 1 do
    pos = pos + q + (i <= r and 1 or 0)
    idx[i] = pos
  end
  return do_split(x, idx, axis, 'array_split')
end
methods.array_split = M.array_split

-- roll(x, shift, axis): axis nil rolls the flattened tensor; shift and axis
-- may be tables of equal length (rolled one after the other).
function M.roll(x, shift, axis)
  x = as_tensor(x)
  if type(shift) == 'table' then
    if type(axis) ~= 'table' or #axis ~= #shift then
      error('roll: a table of shifts needs a table of axes of the same length', 2)
    end
    local r = x
    for i = 1, #shift do r = M.roll(r, shift[i], axis[i]) end
    return r
  end
  if type(shift) ~= 'number' or shift ~= math.floor(shift) then
    error(string.format('roll: shift must be an integer (got %s)', tostring(shift)), 2)
  end
  check(C.ch_roll(x.ptr, shift, axis or 0, axis == nil and 1 or 0, box), 2)
  return wrap(box[0])
end
methods.roll = M.roll

-- tile(x, reps): reps a number or a table (numpy.tile).
function M.tile(x, reps)
  x = as_tensor(x)
  local n, buf = M.shape_arg(reps, 'tile')
  check(C.ch_tile(x.ptr, n, buf, box), 2)
  return wrap(box[0])
end
methods.tile = M.tile

-- repeat_(x, repeats, axis): numpy.repeat; repeats a number or one count per
-- position along axis; axis nil works on the flattened tensor.
-- (`repeat` is a Lua keyword: M['repeat'] is the same function.)
function M.repeat_(x, repeats, axis)
  x = as_tensor(x)
  if is_tensor(repeats) then repeats = repeats:tolist() end
  local n, buf
  if type(repeats) == 'number' then
    n, buf = M.shape_arg(repeats, 'repeat')
  elseif type(repeats) == 'table' then
    n = #repeats
    buf = ffi.new('int64_t[?]', n > 0 and n or 1)
    for i = 1, n do
      local v = repeats[i]
      if type(v) ~= 'number' or v ~= math.floor(v) then
        error(string.format('repeat: count %d must be an integer (got %s)', i, tostring(v)), 2)
      end
      buf[i - 1] = v
    end
  else
    error(string.format('repeat: repeats must be a number or a table (got %s)', type(repeats)), 2)
  end
  check(C.ch_repeat(x.ptr, buf, n, axis or 0, axis == nil and 1 or 0, box), 2)
  return wrap(box[0])
end
M['repeat'] = M.repeat_
methods.repeat_ = M.repeat_

local pad_modes = M.ops.pad_mode   -- name -> C code, from the op list
local pad_buf = ffi.new('int64_t[32]')

-- pad(x, pad_width, {mode = 'constant'|'edge'|'reflect', constant_values = 0}).
-- pad_width: n (every side of every axis), {before, after} (every axis),
-- or {{b0, a0}, {b1, a1}, ...} (one pair per axis).
function M.pad(x, pad_width, opts)
  x = as_tensor(x)
  local nd = x.ndim
  local mode, value = 'constant', 0
  if opts ~= nil then
    if type(opts) == 'string' then mode = opts
    else
      mode = opts.mode or mode
      value = opts.constant_values or value
    end
  end
  local code = pad_modes[mode]
  if not code then
    error(string.format("pad: unknown mode '%s' (expected 'constant', 'edge' or 'reflect')", tostring(mode)), 2)
  end
  if type(value) == 'boolean' then value = value and 1 or 0 end
  if type(value) ~= 'number' then
    error('pad: constant_values must be a number (one value for every side)', 2)
  end
  local function int(v)
    if type(v) ~= 'number' or v ~= math.floor(v) then
      error(string.format('pad: pad widths must be integers (got %s)', tostring(v)), 3)
    end
    return v
  end
  if type(pad_width) == 'number' then
    for d = 0, nd - 1 do pad_buf[2 * d], pad_buf[2 * d + 1] = int(pad_width), pad_width end
  elseif type(pad_width) == 'table' and type(pad_width[1]) == 'number' then
    local b, a = int(pad_width[1]), int(pad_width[2] or pad_width[1])
    for d = 0, nd - 1 do pad_buf[2 * d], pad_buf[2 * d + 1] = b, a end
  elseif type(pad_width) == 'table' then
    if #pad_width == 1 then
      local p = pad_width[1]
      for d = 0, nd - 1 do pad_buf[2 * d], pad_buf[2 * d + 1] = int(p[1]), int(p[2] or p[1]) end
    elseif #pad_width ~= nd then
      error(string.format('pad: pad_width has %d pairs for a %d-d tensor', #pad_width, nd), 2)
    else
      for d = 0, nd - 1 do
        local p = pad_width[d + 1]
        if type(p) == 'number' then p = { p, p } end
        pad_buf[2 * d], pad_buf[2 * d + 1] = int(p[1]), int(p[2] or p[1])
      end
    end
  else
    error(string.format('pad: pad_width must be a number or a table (got %s)', type(pad_width)), 2)
  end
  check(C.ch_pad(x.ptr, pad_buf, code, value, box), 2)
  return wrap(box[0])
end
methods.pad = M.pad

return M
