-- tensor/views.lua: reshaping, transposition, slicing and other views (no
-- copy), plus copies, casts and device moves.
local M = require 'chainer.tensor.core'
local ffi, C, check = M.ffi, M.C, M.check
local wrap, box, shape_arg, axes_arg = M.wrap, M.box, M.shape_arg, M.axes_arg
local methods = M.methods

-- reshape(shape) or reshape(d1, d2, ...); one dimension may be -1.
function methods.reshape(t, shape, ...)
  if type(shape) == 'number' and select('#', ...) > 0 then shape = { shape, ... } end
  local n, s = shape_arg(shape, 'reshape')
  check(C.ch_reshape(t.ptr, n, s, box), 2)
  return wrap(box[0])
end

-- Like reshape, but errors instead of copying.
function methods.view(t, shape, ...)
  if type(shape) == 'number' and select('#', ...) > 0 then shape = { shape, ... } end
  local n, s = shape_arg(shape, 'view')
  check(C.ch_view(t.ptr, n, s, box), 2)
  return wrap(box[0])
end

function methods.flatten(t) return t:reshape(-1) end
methods.ravel = methods.flatten

local perm_buf = ffi.new('int32_t[16]')
-- transpose() reverses the axes; transpose{1, 0, 2} or transpose(1, 0, 2) permutes.
function methods.transpose(t, axes, ...)
  local p = t.ptr
  local nd = p.nd
  if type(axes) == 'number' then axes = { axes, ... } end
  if axes == nil then
    for i = 0, nd - 1 do perm_buf[i] = nd - 1 - i end
  else
    if #axes ~= nd then
      error(string.format('transpose: axes has %d entries for a %d-d tensor', #axes, nd), 2)
    end
    for i = 1, nd do perm_buf[i - 1] = axes[i] end
  end
  check(C.ch_permute(p, perm_buf, box), 2)
  return wrap(box[0])
end
methods.permute = methods.transpose

local function norm_axis(a, nd, fn)
  if type(a) ~= 'number' or a ~= math.floor(a) then
    error(string.format('%s: axis must be an integer (got %s)', fn, tostring(a)), 3)
  end
  if a < -nd or a >= nd then
    error(string.format('%s: axis %d is out of range for a %d-d tensor', fn, a, nd), 3)
  end
  return a < 0 and a + nd or a
end
M.norm_axis = norm_axis

function methods.swapaxes(t, a, b)
  local nd = t.ptr.nd
  a, b = norm_axis(a, nd, 'swapaxes'), norm_axis(b, nd, 'swapaxes')
  local axes = {}
  for i = 0, nd - 1 do axes[i + 1] = i end
  axes[a + 1], axes[b + 1] = b, a
  return t:transpose(axes)
end

-- moveaxis(source, destination) with single axes or tables of axes.
function methods.moveaxis(t, src, dst)
  local nd = t.ptr.nd
  if type(src) == 'number' then src = { src } end
  if type(dst) == 'number' then dst = { dst } end
  if #src ~= #dst then error('moveaxis: source and destination must have the same number of axes', 2) end
  local moved, order = {}, {}
  for i = 1, #src do
    src[i] = norm_axis(src[i], nd, 'moveaxis')
    dst[i] = norm_axis(dst[i], nd, 'moveaxis')
    moved[src[i]] = true
  end
  for i = 0, nd - 1 do if not moved[i] then order[#order + 1] = i end end
  local pairs_ = {}
  for i = 1, #src do pairs_[i] = { dst[i], src[i] } end
  table.sort(pairs_, function(x, y) return x[1] < y[1] end)
  for _, pr in ipairs(pairs_) do table.insert(order, pr[1] + 1, pr[2]) end
  return t:transpose(order)
end

function methods.rollaxis(t, axis, start)
  local nd = t.ptr.nd
  axis = norm_axis(axis, nd, 'rollaxis')
  start = start or 0
  if start < 0 then start = start + nd end
  if start < 0 or start > nd then error(string.format('rollaxis: start %d out of range', start), 2) end
  if axis < start then start = start - 1 end
  if axis == start then return t:view(t.shape) end
  local order = {}
  for i = 0, nd - 1 do if i ~= axis then order[#order + 1] = i end end
  table.insert(order, start + 1, axis)
  return t:transpose(order)
end

function methods.expand_dims(t, axis)
  check(C.ch_expand_dims(t.ptr, axis, box), 2)
  return wrap(box[0])
end

-- squeeze() drops every size-1 axis; squeeze(axis) or squeeze{axes} only those.
function methods.squeeze(t, axes)
  local n, a = axes_arg(axes, 'squeeze')
  check(C.ch_squeeze(t.ptr, a, n, box), 2)
  return wrap(box[0])
end

function methods.broadcast_to(t, shape)
  local n, s = shape_arg(shape, 'broadcast_to')
  check(C.ch_broadcast_to(t.ptr, n, s, box), 2)
  return wrap(box[0])
end

function methods.diagonal(t, offset, axis1, axis2)
  check(C.ch_diagonal(t.ptr, offset or 0, axis1 or 0, axis2 or 1, box), 2)
  return wrap(box[0])
end

-- flip(axis) reverses one axis; flip() reverses all of them.
function methods.flip(t, axis)
  if axis == nil then
    local r = t
    for a = 0, t.ptr.nd - 1 do r = r:flip(a) end
    return t.ptr.nd == 0 and t:view(t.shape) or r
  end
  if type(axis) == 'table' then
    local r = t
    for _, a in ipairs(axis) do r = r:flip(a) end
    return r
  end
  check(C.ch_flip(t.ptr, axis, box), 2)
  return wrap(box[0])
end

function methods.as_strided(t, shape, strides, offset)
  local n, s = shape_arg(shape, 'as_strided')
  local n2, st = shape_arg(strides, 'as_strided', M.shape_buf2)
  if n ~= n2 then error('as_strided: shape and strides must have the same length', 2) end
  check(C.ch_as_strided(t.ptr, n, s, st, offset or t.ptr.offset, box), 2)
  return wrap(box[0])
end

---------------------------------------------------------------------------
-- basic indexing: t:slice(...)
---------------------------------------------------------------------------
-- Each argument is one index term, as in NumPy's x[a, b, ...] with 0-based
-- positions:
--   3                    an integer (drops the axis); negative from the end
--   {1, 5}, {1, 5, 2}    a slice start:stop[:step]; use nil or '_' to omit:
--                        {nil, nil, -1} is ::-1
--   M.newaxis / 'newaxis' a new axis of size 1 (None)
--   '...'                an ellipsis
--   a string with several terms in Python syntax: '1:3, ::-1, None, ..., 2'
M.newaxis = setmetatable({}, { __tostring = function() return 'newaxis' end })
M.ellipsis = '...'

local index_buf = ffi.new('ch_index[32]')

local function parse_python_index(str, terms)
  for part in (str .. ','):gmatch('([^,]*),') do
    part = part:gsub('^%s+', ''):gsub('%s+$', '')
    if part == '...' or part == 'Ellipsis' then
      terms[#terms + 1] = '...'
    elseif part == 'None' or part == 'newaxis' then
      terms[#terms + 1] = M.newaxis
    elseif part:find(':') then
      local a, b, c = part:match('^([^:]*):([^:]*):?([^:]*)$')
      if not a then error(string.format("slice: cannot parse index term '%s'", part), 4) end
      local function num(x)
        if x == '' then return nil end
        local v = tonumber(x)
        if not v then error(string.format("slice: cannot parse index term '%s'", part), 5) end
        return v
      end
      terms[#terms + 1] = { num(a), num(b), num(c), _slice = true }
    elseif part ~= '' then
      local v = tonumber(part)
      if not v then error(string.format("slice: cannot parse index term '%s'", part), 4) end
      terms[#terms + 1] = v
    end
  end
end

-- Fills index_buf from Lua index terms; returns the number of terms.
local function fill_index(terms, fn)
  if #terms > 32 then error(fn .. ': too many index terms', 3) end
  for k = 1, #terms do
    local term, ix = terms[k], index_buf[k - 1]
    ix.has_start, ix.has_stop, ix.has_step = 0, 0, 0
    ix.start, ix.stop, ix.step = 0, 0, 1
    if type(term) == 'number' then
      if term ~= math.floor(term) then error(string.format('%s: index %s is not an integer', fn, term), 3) end
      ix.kind = 0
      ix.start = term
    elseif term == M.newaxis or term == 'newaxis' then
      ix.kind = 2
    elseif term == '...' then
      ix.kind = 3
    elseif type(term) == 'table' and not M.is_tensor(term) then
      ix.kind = 1
      local a, b, c = term[1], term[2], term[3]
      if term.start ~= nil then a = term.start end
      if term.stop ~= nil then b = term.stop end
      if term.step ~= nil then c = term.step end
      if a ~= nil and a ~= '_' then ix.has_start = 1; ix.start = a end
      if b ~= nil and b ~= '_' then ix.has_stop = 1; ix.stop = b end
      if c ~= nil and c ~= '_' then ix.has_step = 1; ix.step = c end
    else
      error(string.format('%s: unsupported index term %s (integers, {start, stop, step}, newaxis, ' ..
        "'...'; integer index tensors go through take)", fn, tostring(term)), 3)
    end
  end
  return #terms
end

-- Normalises t:slice's arguments into a list of terms.
function M.index_terms(...)
  local terms = {}
  for i = 1, select('#', ...) do
    local a = select(i, ...)
    if type(a) == 'string' and a ~= '...' and a ~= 'newaxis' then
      parse_python_index(a, terms)
    else
      terms[#terms + 1] = a
    end
  end
  return terms
end

-- A view selected by basic index terms (see above).
function methods.slice(t, ...)
  local terms = M.index_terms(...)
  local n = fill_index(terms, 'slice')
  check(C.ch_slice(t.ptr, index_buf, n, box), 2)
  return wrap(box[0])
end

-- Lower-level entry point: a view from an already parsed list of terms.
function M.slice_terms(t, terms)
  local n = fill_index(terms, 'get_item')
  check(C.ch_slice(t.ptr, index_buf, n, box), 3)
  return wrap(box[0])
end

-- t:select(i): the sub-tensor at position i of the first axis (a view).
function methods.select(t, i, axis)
  if axis and axis ~= 0 then
    local terms = {}
    local nd = t.ptr.nd
    axis = norm_axis(axis, nd, 'select')
    for k = 1, axis do terms[k] = { nil, nil } end
    terms[axis + 1] = i
    return M.slice_terms(t, terms)
  end
  return t:slice(i)
end

---------------------------------------------------------------------------
-- copies, casts, devices
---------------------------------------------------------------------------
function methods.copy(t)
  check(C.ch_copy(t.ptr, box), 2)
  return wrap(box[0])
end
methods.clone = methods.copy

function methods.contiguous(t)
  if C.ch_is_contiguous(t.ptr) ~= 0 then return t end
  check(C.ch_contiguous(t.ptr, box), 2)
  return wrap(box[0])
end

-- astype(dtype): a converted copy (the tensor itself when the dtype already matches
-- and copy == false).
function methods.astype(t, dtype, copy)
  local code = M.dtype_code(dtype, 'astype')
  if copy == false and t.ptr.dt == code then return t end
  check(C.ch_astype(t.ptr, code, box), 2)
  return wrap(box[0])
end

function methods.to_device(t, device)
  local id = M.device_id(device, 'to_device')
  if t.ptr.dev == id then return t end
  check(C.ch_to_device(t.ptr, id, box), 2)
  return wrap(box[0])
end
function methods.to_cpu(t) return t:to_device(-1) end
function methods.to_gpu(t, id) return t:to_device(id or 0) end

-- t:copy_(src): writes src into t in place (broadcast and cast); returns t.
function methods.copy_(t, src)
  src = M.as_tensor(src, t.dtype)
  check(C.ch_copy_into(t.ptr, src.ptr), 2)
  return t
end

-- t:fill_(value): sets every element in place; returns t.
function methods.fill_(t, value)
  if type(value) == 'boolean' then value = value and 1 or 0 end
  check(C.ch_fill(t.ptr, value), 2)
  return t
end

return M
