-- tensor/index.lua: integer and boolean indexing (take, take_along_axis,
-- scatter_add, masked_select, nonzero) and NumPy-style advanced indexing
-- t:index(...).  Kernels: runtime/cpu/index.c.
local M = require 'chainer.tensor.core'
local ffi, C, check = M.ffi, M.C, M.check
local wrap, box, as_tensor, is_tensor = M.wrap, M.box, M.as_tensor, M.is_tensor
local methods = M.methods

-- Index arguments: tensors pass through; Lua numbers and tables of 0-based
-- integers become int64 tensors on the indexed tensor's device `dev`.
local function index_tensor(v, fn, dev)
  if is_tensor(v) then return v end
  if type(v) == 'number' then
    if v ~= math.floor(v) then error(string.format('%s: index %s is not an integer', fn, v), 3) end
    return M.array(v, 'int64', dev)
  end
  if type(v) == 'table' then return M.array(v, 'int64', dev) end
  error(string.format('%s: indices must be an integer tensor, a number or a table of integers (got %s)', fn,
    type(v)), 3)
end

-- int64 tensor from a Lua array of 0-based integers (for t:index).
function M.ints(tbl) return M.array(tbl, 'int64') end

-- take(x, indices, axis): numpy.take; axis nil takes from the flattened x.
function M.take(x, indices, axis)
  x = as_tensor(x)
  local idx = index_tensor(indices, 'take', x.ptr.dev)
  check(C.ch_take(x.ptr, idx.ptr, axis or 0, axis == nil and 1 or 0, box), 2)
  return wrap(box[0])
end
methods.take = M.take

-- take_along_axis(x, indices, axis): numpy.take_along_axis (axis nil: the
-- flattened x with 1-D indices).
function M.take_along_axis(x, indices, axis)
  x = as_tensor(x)
  local idx = index_tensor(indices, 'take_along_axis', x.ptr.dev)
  if axis == nil then x, axis = x:reshape(-1), 0 end
  check(C.ch_take_along_axis(x.ptr, idx.ptr, axis, box), 2)
  return wrap(box[0])
end
methods.take_along_axis = M.take_along_axis

-- t:scatter_add_(axis, indices, values): numpy.add.at(t, (:, ..., indices), values)
-- in place (repeated indices accumulate); returns t.
function methods.scatter_add_(t, axis, indices, values)
  local idx = index_tensor(indices, 'scatter_add', t.ptr.dev)
  values = as_tensor(values, t.dtype)
  check(C.ch_scatter_add(t.ptr, axis or 0, idx.ptr, values.ptr), 2)
  return t
end
-- scatter_add(target, axis, indices, values): the same, in place on target
-- (like cupyx.scatter_add); returns target.
M.scatter_add = methods.scatter_add_

-- t:scatter_add_along_axis_(axis, indices, values): the transpose of
-- take_along_axis, accumulating, in place; returns t.
function methods.scatter_add_along_axis_(t, axis, indices, values)
  local idx = index_tensor(indices, 'scatter_add_along_axis', t.ptr.dev)
  values = as_tensor(values, t.dtype)
  check(C.ch_scatter_add_along_axis(t.ptr, axis, idx.ptr, values.ptr), 2)
  return t
end
function M.scatter_add_along_axis(target, axis, indices, values)
  return methods.scatter_add_along_axis_(target, axis, indices, values)
end

-- masked_select(x, mask): the 1-D tensor of x's elements where the bool mask
-- (broadcast against x) is true, in C order.
function M.masked_select(x, mask)
  x = as_tensor(x)
  mask = as_tensor(mask)
  check(C.ch_masked_select(x.ptr, mask.ptr, box), 2)
  return wrap(box[0])
end
methods.masked_select = M.masked_select

-- nonzero(x): (count, ndim) int64 positions of the non-zero elements
-- (numpy.argwhere; column k is numpy.nonzero(x)[k]).
M.nonzero = M.unary_kernel(C.ch_nonzero)
methods.nonzero = M.nonzero
M.argwhere = M.nonzero

---------------------------------------------------------------------------
-- advanced indexing: t:index(...)
---------------------------------------------------------------------------
-- Terms are those of t:slice (numbers, {start, stop, step} tables, newaxis,
-- '...', Python-syntax strings) plus advanced terms:
--   an integer tensor (any shape; M.ints{0, 2, 1} from a Lua array)
--   a bool tensor (a mask over as many axes as it has), or a Lua array of booleans
-- Plain Lua tables stay slices, exactly as in t:slice.  With one advanced
-- term the index's axes replace the indexed axis; several advanced terms
-- broadcast together and their axes go where the first one was if they are
-- adjacent, else first (NumPy's rule).  Advanced indexing copies.

local function is_bool_table(v)
  return type(v) == 'table' and not is_tensor(v) and #v > 0 and type(v[1]) == 'boolean'
end

local function advanced(term)
  return is_tensor(term) or is_bool_table(term)
end

-- Number of axes of x a term consumes.
local function consumed(term)
  if term == M.newaxis or term == 'newaxis' or term == '...' then return 0 end
  if is_bool_table(term) then return 1 end
  if is_tensor(term) and term.dtype == 'bool' then return term.ndim end
  return 1
end

function methods.index(t, ...)
  local terms = M.index_terms(...)
  local has_adv = false
  for i = 1, #terms do if advanced(terms[i]) then has_adv = true break end end
  if not has_adv then return M.slice_terms(t, terms) end
  local nd = t.ndim
  -- expand the ellipsis (or an implicit one at the end) into full slices
  local used, ell = 0, nil
  for i = 1, #terms do
    if terms[i] == '...' then
      if ell then error("index: only one '...' is allowed", 2) end
      ell = i
    end
    used = used + consumed(terms[i])
  end
  if used > nd then
    error(string.format('index: too many indices for a %d-d tensor (%d given)', nd, used), 2)
  end
  local exp = {}
  for i = 1, #terms do
    if i == ell then
      for _ = 1, nd - used do exp[#exp + 1] = { nil, nil } end
    else
      local term = terms[i]
      if is_bool_table(term) then term = M.array(term, 'bool', t.ptr.dev) end
      if is_tensor(term) and term.dtype == 'bool' then
        -- a k-d mask is k integer index arrays: the columns of nonzero()
        local nz = M.nonzero(term)
        if term.ndim == 0 then error('index: a 0-d bool index is not supported', 2) end
        for k = 0, term.ndim - 1 do
          exp[#exp + 1] = { adv = nz:slice({ nil, nil }, k):contiguous() }
        end
      elseif is_tensor(term) then
        if not (term.dtype:find('^int') or term.dtype == 'uint8') then
          error(string.format('index: index tensors must be integer or bool (got %s)', term.dtype), 2)
        end
        exp[#exp + 1] = { adv = term }
      else
        exp[#exp + 1] = term
      end
    end
  end
  if not ell then for _ = 1, nd - used do exp[#exp + 1] = { nil, nil } end end
  -- basic part first: advanced terms become full slices, remembering the
  -- axis of the view they index
  local basic, advs, out_axis = {}, {}, 0
  for i = 1, #exp do
    local term = exp[i]
    if type(term) == 'table' and term.adv then
      advs[#advs + 1] = { axis = out_axis, idx = term.adv }
      basic[#basic + 1] = { nil, nil }
      out_axis = out_axis + 1
    else
      basic[#basic + 1] = term
      if type(term) ~= 'number' then out_axis = out_axis + 1 end
    end
  end
  local v = M.slice_terms(t, basic)
  if #advs == 1 then
    local a = advs[1]
    check(C.ch_take(v.ptr, a.idx.ptr, a.axis, 0, box), 2)
    return wrap(box[0])
  end
  -- several: broadcast the index arrays, fold them into one flat index over
  -- the indexed axes moved to the front
  local bshape = {}
  for k = 1, #advs do
    local s, bs = advs[k].idx.shape, {}
    local n = math.max(#s, #bshape)
    for i = 1, n do
      local a = s[#s - n + i] or 1
      local b = bshape[#bshape - n + i] or 1
      if a ~= b and a ~= 1 and b ~= 1 then
        error(string.format('index: index arrays of shapes %s and %s cannot be broadcast together',
          M.shape_str(s), M.shape_str(bshape)), 2)
      end
      bs[i] = a == 1 and b or a
    end
    bshape = bs
  end
  local vshape = v.shape
  local perm, is_adv = {}, {}
  for k = 1, #advs do perm[#perm + 1] = advs[k].axis; is_adv[advs[k].axis] = true end
  for a = 0, v.ndim - 1 do if not is_adv[a] then perm[#perm + 1] = a end end
  local rest = {}
  local total = 1
  for k = 1, #advs do total = total * vshape[advs[k].axis + 1] end
  rest[1] = total
  for i = #advs + 1, #perm do rest[#rest + 1] = vshape[perm[i] + 1] end
  local folded = v:transpose(perm):reshape(rest)
  local nb = 1
  for i = 1, #bshape do nb = nb * bshape[i] end
  -- the flat index is folded on the host, then moved to v's device
  local flat = M.empty(bshape, 'int64')
  local fp = ffi.cast('int64_t*', C.ch_tensor_ptr(flat.ptr))
  for i = 0, nb - 1 do fp[i] = 0 end
  for k = 1, #advs do
    local a = advs[k]
    local size = vshape[a.axis + 1]
    local bi = a.idx:broadcast_to(bshape):astype('int64'):to_cpu():contiguous()
    local bp = ffi.cast('int64_t*', C.ch_tensor_ptr(bi.ptr))
    for i = 0, nb - 1 do
      local j = bp[i]
      if j < -size or j >= size then
        error(string.format('index: index %d is out of bounds for axis %d with size %d', tonumber(j), a.axis, size), 2)
      end
      if j < 0 then j = j + size end
      fp[i] = fp[i] * size + j
    end
  end
  flat = flat:to_device(v.ptr.dev)
  check(C.ch_take(folded.ptr, flat.ptr, 0, 0, box), 2)
  local r = wrap(box[0])
  -- adjacent advanced axes: their broadcast axes go where the first one was
  local adjacent = true
  for k = 2, #advs do if advs[k].axis ~= advs[k - 1].axis + 1 then adjacent = false end end
  local first = advs[1].axis
  if adjacent and first > 0 then
    local nbd, order = #bshape, {}
    local rnd = r.ndim
    for i = 0, first - 1 do order[#order + 1] = nbd + i end
    for i = 0, nbd - 1 do order[#order + 1] = i end
    for i = nbd + first, rnd - 1 do order[#order + 1] = i end
    r = r:transpose(order):contiguous()
  end
  return r
end

return M
