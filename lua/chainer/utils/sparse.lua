-- utils/sparse.lua: chainer.utils.CooMatrix and chainer.utils.to_coo, the
-- COO sparse matrices F.sparse_matmul multiplies with dense ones.
--
--   local sp = chainer.utils.CooMatrix(data, row, col, {3, 4})
--   local sp = chainer.utils.CooMatrix(data, row, col, {3, 4}, {order = 'C', requires_grad = true})
--   local sp = chainer.utils.to_coo(x)          -- x (m, n) or (nb, m, n)
--   sp.data (a Variable), sp.row, sp.col (int32 tensors), sp.shape, sp.order, sp:to_dense()
--
-- data (ldnz) or (nb, ldnz) holds the values at rows `row` and columns
-- `col` (0-based; entries with a negative index are padding, as to_coo
-- makes for ldnz > nnz).  When data is a Variable it is kept as sp.data, so
-- gradients of F.sparse_matmul reach it; a tensor is wrapped in a new
-- Variable with requires_grad (default false, as Chainer).
local chainer = require 'chainer'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local class = require 'chainer.class'

local M = {}

local COO_SIGNATURE = args.signature { 'order', 'requires_grad' }
local TO_COO_SIGNATURE = args.signature { 'ldnz', 'requires_grad' }
local ORDERS = { C = true, F = true, other = true }

local function is_variable(v) return type(v) == 'table' and v._is_variable == true end

local function same_shape(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- True when the valid entries of one matrix (1-d row, col as Lua arrays)
-- are sorted by row, then column (Chainer's _is_c_order).
local function is_c_order(row, col)
  local pr, pc
  for i = 1, #row do
    local r, c = row[i], col[i]
    if r >= 0 and c >= 0 then
      if pr and (r < pr or (r == pr and c < pc)) then return false end
      pr, pc = r, c
    end
  end
  return true
end

-- 'C' (row-major sorted), 'F' (column-major sorted) or 'other': a hint
-- only (chainlua's kernels do not depend on it).
local function get_order(row, col)
  local rows, cols = row:astype('int64'):totable(), col:astype('int64'):totable()
  if row.ndim == 1 then rows, cols = { rows }, { cols } end
  local c_order, f_order = true, true
  for b = 1, #rows do
    c_order = c_order and is_c_order(rows[b], cols[b])
    f_order = f_order and is_c_order(cols[b], rows[b])
  end
  return c_order and 'C' or (f_order and 'F' or 'other')
end
M.get_order = get_order

local CooMatrix = class.Object:extend('CooMatrix')
M.CooMatrix = CooMatrix

function CooMatrix:init(data, row, col, shape, ...)
  local fn = 'CooMatrix'
  local o = args.parse(fn, COO_SIGNATURE, select('#', ...), ...)
  local d = args.float_array(fn, 'data', data)
  local r = args.int_array(fn, 'row', row)
  local c = args.int_array(fn, 'col', col)
  if d.ndim < 1 or d.ndim > 2 then
    error(string.format('%s: data must be 1-d (nnz) or 2-d (batch, nnz), got shape %s', fn, T.shape_str(d.shape)), 2)
  end
  if not (same_shape(d.shape, r.shape) and same_shape(d.shape, c.shape)) then
    error(string.format('%s: data, row and col must have the same shape (got %s, %s, %s)', fn,
      T.shape_str(d.shape), T.shape_str(r.shape), T.shape_str(c.shape)), 2)
  end
  if type(shape) ~= 'table' or #shape ~= 2 then
    error(fn .. ': shape must be a table {rows, cols} (got ' .. tostring(shape) .. ')', 2)
  end
  for i = 1, 2 do
    local n = shape[i]
    if type(n) ~= 'number' or n ~= math.floor(n) or n < 1 then
      error(string.format('%s: shape[%d] must be a positive integer (got %s)', fn, i, tostring(n)), 2)
    end
  end
  if r.size > 0 and (T.max(r):item() >= shape[1] or T.max(c):item() >= shape[2]) then
    error(string.format('%s: row / col indices must be below shape {%d, %d}', fn, shape[1], shape[2]), 2)
  end
  if o.order ~= nil and o.order ~= false and not ORDERS[o.order] then
    error(fn .. ": order must be 'C', 'F', 'other' or nil (got " .. tostring(o.order) .. ')', 2)
  end
  if is_variable(data) then
    self.data = data
  else
    self.data = chainer.Variable(d, { requires_grad = o.requires_grad == true })
  end
  self.row, self.col = r:astype('int32'), c:astype('int32')
  self.shape = { shape[1], shape[2] }
  self.order = (o.order and o.order) or get_order(self.row, self.col)
end

-- The dense matrix (rows, cols), or (batch, rows, cols), as a tensor.
function CooMatrix:to_dense()
  local d = self.data.array
  local m, k = self.shape[1], self.shape[2]
  local nb = d.ndim == 2 and d.shape[1] or 1
  local row, col = self.row:astype('int64'), self.col:astype('int64')
  local valid = T.logical_and(T.ge(row, 0), T.ge(col, 0))
  local batch = T.arange(nb, 'int64'):reshape(d.ndim == 2 and { nb, 1 } or { 1 })
  local flat = T.where(valid, (batch * m + row) * k + col, 0)
  local out = T.zeros({ nb * m * k }, d.dtype)
  out:scatter_add_(0, flat:reshape(-1), T.where(valid, d, 0):reshape(-1))
  return out:reshape(d.ndim == 2 and { nb, m, k } or { m, k })
end

-- to_coo(x, ldnz, requires_grad): the non-zero entries of x (m, n), or of
-- each matrix of x (nb, m, n), in C order; ldnz (default: the most
-- non-zeros of any matrix) pads data with 0 and row / col with -1.
function M.to_coo(x, ...)
  local fn = 'to_coo'
  local o = args.parse(fn, TO_COO_SIGNATURE, select('#', ...), ...)
  local a = args.float_array(fn, 'x', x)
  if a.ndim ~= 2 and a.ndim ~= 3 then
    error(string.format('%s: x must be 2-d or 3-d, got shape %s', fn, T.shape_str(a.shape)), 2)
  end
  local ldnz = o.ldnz
  if ldnz ~= nil and (type(ldnz) ~= 'number' or ldnz ~= math.floor(ldnz) or ldnz < 0) then
    error(fn .. ': ldnz must be a non-negative integer (got ' .. tostring(ldnz) .. ')', 2)
  end
  local mats = a.ndim == 3 and a:totable() or { a:totable() }
  local found, most = {}, 0
  for b, mat in ipairs(mats) do
    local vals, rows, cols = {}, {}, {}
    for i, line in ipairs(mat) do
      for j, v in ipairs(line) do
        if v ~= 0 then vals[#vals + 1], rows[#rows + 1], cols[#cols + 1] = v, i - 1, j - 1 end
      end
    end
    found[b] = { vals, rows, cols }
    most = math.max(most, #vals)
  end
  ldnz = math.max(ldnz or 0, most)
  local data, row, col = {}, {}, {}
  for b, f in ipairs(found) do
    data[b], row[b], col[b] = {}, {}, {}
    for j = 1, ldnz do
      data[b][j], row[b][j], col[b][j] = f[1][j] or 0, f[2][j] or -1, f[3][j] or -1
    end
  end
  if a.ndim == 2 then data, row, col = data[1], row[1], col[1] end
  local shape = { a.shape[a.ndim - 1], a.shape[a.ndim] }
  local mk = function(t, dt)
    if ldnz == 0 then return T.zeros(a.ndim == 3 and { a.shape[1], 0 } or { 0 }, dt) end
    return T.array(t, dt)
  end
  return CooMatrix(mk(data, a.dtype), mk(row, 'int32'), mk(col, 'int32'), shape,
    { requires_grad = o.requires_grad == true })
end

return M
