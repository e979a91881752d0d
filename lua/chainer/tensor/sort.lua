-- tensor/sort.lua: stable sort/argsort along an axis, and unique.
-- Kernels: runtime/cpu/sort.c.
local M = require 'chainer.tensor.core'
local ffi, C, check = M.ffi, M.C, M.check
local wrap, box, as_tensor = M.wrap, M.box, M.as_tensor
local methods = M.methods

-- Options: {axis = -1, descending = false}; a number is the axis.
local function sort_opts(opts)
  if opts == nil then return -1, 0 end
  if type(opts) == 'number' then return opts, 0 end
  local axis = opts.axis
  if axis == nil then axis = -1 end
  return axis, opts.descending and 1 or 0
end

-- The tensor function of a sorting kernel ch_X(x, axis, descending, &out);
-- axis = false sorts the flattened x.
local function sorting(kernel)
  return function(x, opts)
    x = as_tensor(x)
    local axis, desc = sort_opts(opts)
    if axis == false then x, axis = x:reshape(-1), 0 end
    check(kernel(x.ptr, axis, desc, box), 2)
    return wrap(box[0])
  end
end

-- sort(x, {axis = -1, descending = false}): a sorted copy.  Stable; NaN
-- sorts last (first when descending).
M.sort = sorting(C.ch_sort)
methods.sort = M.sort

-- argsort(x, {axis = -1, descending = false}): int64 positions that sort x.
M.argsort = sorting(C.ch_argsort)
methods.argsort = M.argsort

local ubox = ffi.new('ch_tensor*[3]')

-- unique(x, {return_inverse = false, return_counts = false}): the sorted
-- distinct values of the flattened x, then (if asked) the int64 inverse
-- (x:reshape(-1) == values:take(inverse)) and the int64 counts.
function M.unique(x, opts)
  x = as_tensor(x)
  local want_inv = opts ~= nil and opts.return_inverse and true or false
  local want_cnt = opts ~= nil and opts.return_counts and true or false
  ubox[0], ubox[1], ubox[2] = nil, nil, nil
  check(C.ch_unique(x.ptr, ubox, want_inv and ubox + 1 or nil, want_cnt and ubox + 2 or nil), 2)
  local values = wrap(ubox[0])
  local inv = want_inv and wrap(ubox[1]) or nil
  local cnt = want_cnt and wrap(ubox[2]) or nil
  if want_inv and want_cnt then return values, inv, cnt end
  if want_inv then return values, inv end
  if want_cnt then return values, cnt end
  return values
end
methods.unique = M.unique

return M
