-- functions/math/sparse_matmul.lua: F.sparse_matmul, the product of a COO
-- sparse matrix (chainer.utils.CooMatrix) and a dense one.
--
--   F.sparse_matmul(a, b, transa = false, transb = false)
--
-- One of a, b is a CooMatrix, the other a dense (m, n) matrix or, with a
-- batched CooMatrix (data (nb, ldnz)), a batch (nb, m, n).  transa /
-- transb transpose each matrix of a / b first.  The result is dense.
-- Gradients reach the dense operand and the sparse values sp.data (entries
-- with a negative row or column are padding: they add nothing and get a
-- zero gradient).
--
-- Built from differentiable gathers and scatters, so gradients of any
-- order work: the sparse product S.D gathers the rows D[col] of the dense
-- operand (Take), scales each by its value and adds them into the rows
-- `row` of the result (TakeGrad, the scatter-add): O(nnz * n) work.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local class = require 'chainer.class'
local Take = require 'chainer.functions.array._take'
local reshape = require('chainer.functions.array.reshape').reshape
local broadcast_to = require('chainer.functions.array.broadcast_to').broadcast_to
local swapaxes = require('chainer.functions.array.axes').swapaxes

local M = {}

local FN = 'sparse_matmul'
local SIGNATURE = args.signature { 'transa', 'transb' }

local function is_coo(v)
  return type(v) == 'table' and class.Object.isinstance(v, require('chainer.utils.sparse').CooMatrix)
end

local function transpose_last(x, nd) return swapaxes(x, nd - 2, nd - 1) end

-- S.D, or S^T.D when transposed, for CooMatrix S and dense D.
local function coo_times_dense(sp, transposed, D, dense_name)
  local data = sp.data
  local dd = data.array
  local row, col = sp.row:astype('int64'), sp.col:astype('int64')
  local m, k = sp.shape[1], sp.shape[2]
  if transposed then row, col, m, k = col, row, k, m end
  local batched = dd.ndim == 2
  local ds = D.shape
  if #ds ~= dd.ndim + 1 then
    error(string.format('%s: %s must be %d-d to match the sparse matrix (data %s), got shape %s', FN, dense_name,
      dd.ndim + 1, T.shape_str(dd.shape), T.shape_str(ds)), 3)
  end
  if batched and ds[1] ~= dd.shape[1] then
    error(string.format('%s: batch sizes differ: %d sparse matrices, %s has %d', FN, dd.shape[1], dense_name, ds[1]), 3)
  end
  if D.dtype ~= dd.dtype then
    error(string.format('%s: the sparse values are %s, %s is %s', FN, dd.dtype, dense_name, D.dtype), 3)
  end
  local nb, n = batched and ds[1] or 1, ds[#ds]
  local valid = T.logical_and(T.ge(row, 0), T.ge(col, 0))
  local base = batched and T.arange(nb, 'int64'):reshape({ nb, 1 }) or 0
  local gather_idx = T.where(valid, base * k + col, 0):reshape(-1)
  local scatter_idx = T.where(valid, base * m + row, 0):reshape(-1)
  local mask = T.where(valid, 1, 0):astype(dd.dtype):reshape({ -1, 1 })

  local rows = Take._take(reshape(D, { nb * k, n }), gather_idx, 0)          -- (nnz, n): D[col]
  local weights = broadcast_to(reshape(data, { -1, 1 }) * mask, { gather_idx.size, n })
  local scatter = setmetatable({}, Take.TakeGrad)
  scatter.idx, scatter.axis, scatter.shape = scatter_idx, 0, { nb * m, n }
  local y = scatter:apply({ weights * rows })[1]                              -- rows added at `row`
  return reshape(y, batched and { nb, m, n } or { m, n })
end

-- The (rows, cols) of operand v after its transpose flag.
local function op_shape(v, trans)
  local r, c
  if is_coo(v) then r, c = v.shape[1], v.shape[2]
  else local s = v.shape; r, c = s[#s - 1], s[#s] end
  if trans then return c, r end
  return r, c
end

function M.sparse_matmul(a, b, ...)
  local o = args.parse(FN, SIGNATURE, select('#', ...), ...)
  local transa, transb = o.transa == true, o.transb == true
  if is_coo(a) ~= is_coo(b) then
    local d = args.float_array(FN, is_coo(a) and 'b' or 'a', is_coo(a) and b or a)
    if d.ndim < 2 or d.ndim > 3 then
      error(string.format('%s: the dense operand must be 2-d or 3-d (batched), got shape %s', FN,
        T.shape_str(d.shape)), 2)
    end
    local ar, ac = op_shape(is_coo(a) and a or d, transa)
    local br, bc = op_shape(is_coo(b) and b or d, transb)
    if ac ~= br then
      error(string.format('%s: shapes do not match: a is %dx%d and b %dx%d (after transa / transb)', FN, ar, ac, br,
        bc), 2)
    end
  end
  if is_coo(a) and not is_coo(b) then
    local d = args.float_array(FN, 'b', b)
    local D = transb and transpose_last(b, d.ndim) or b
    return coo_times_dense(a, transa, D, 'b')
  elseif is_coo(b) and not is_coo(a) then
    -- op(A).op(S) = (op(S)^T . op(A)^T)^T
    local d = args.float_array(FN, 'a', a)
    local D = transa and a or transpose_last(a, d.ndim)
    local y = coo_times_dense(b, not transb, D, 'a')
    return transpose_last(y, d.ndim)
  end
  local function kind(v)
    if is_coo(v) then return 'CooMatrix' end
    if T.is_tensor(v) then return 'tensor' end
    if type(v) == 'table' and v._is_variable then return 'Variable' end
    return type(v)
  end
  error(string.format('%s: exactly one of a and b must be a chainer.utils.CooMatrix (got %s and %s)', FN,
    kind(a), kind(b)), 2)
end

return M
