-- F.sparse_matmul with chainer.utils.CooMatrix / chainer.utils.to_coo
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'

-- A 3 x 4 sparse matrix with 5 entries (one repeated position, which adds)
-- and one padding entry (-1).
local ROW = { 0, 2, 1, 2, 0, -1 }
local COL = { 1, 0, 3, 0, 2, -1 }
-- the same pattern for a batch of two
local BROW = { { 0, 2, 1, 2, 0, -1 }, { 1, 1, 0, -1, -1, -1 } }
local BCOL = { { 1, 0, 3, 0, 2, -1 }, { 0, 3, 2, -1, -1, -1 } }

local function coo(data, batched)
  return chainer.utils.CooMatrix(data, T.array(batched and BROW or ROW, 'int32'),
    T.array(batched and BCOL or COL, 'int32'), { 3, 4 })
end

-- dense of the values (padding values count as nothing)
local function dense(data, batched)
  local d = data:astype('float64'):totable()
  local function one(vals, rows, cols)
    local m = { { 0, 0, 0, 0 }, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } }
    for j = 1, #vals do
      if rows[j] >= 0 then m[rows[j] + 1][cols[j] + 1] = m[rows[j] + 1][cols[j] + 1] + vals[j] end
    end
    return m
  end
  if batched then return T.array({ one(d[1], BROW[1], BCOL[1]), one(d[2], BROW[2], BCOL[2]) }, data.dtype) end
  return T.array(one(d, ROW, COL), data.dtype)
end

local function tr(x) return x:swapaxes(x.ndim - 2, x.ndim - 1) end

-- The reference: the dense product, with the transpositions of o.
local function dense_product(a, b, o)
  if o.transa then a = tr(a) end
  if o.transb then b = tr(b) end
  return T.matmul(a, b)
end

-- The shapes of the data (6 entries) and of the dense operand (a matrix
-- of shape m), each with a batch axis of 2 in front when o.batched.
local function operand_shapes(o, m)
  if o.batched then return { 2, 6 }, { 2, m[1], m[2] } end
  return { 6 }, m
end

function_spec.describe('F.sparse_matmul (sparse a)', {
  fn = function(data, b, o) return F.sparse_matmul(coo(data, o.batched), b, o.transa, o.transb) end,
  inputs = function(dt, o)
    local nd = o.batched and { 2 } or {}
    local bshape = o.transb and { 2, 4 } or { 4, 2 }
    if o.transa then bshape = o.transb and { 2, 3 } or { 3, 2 } end
    local ds, bs = operand_shapes(o, bshape)
    return { T.random.uniform(-1, 1, ds, dt), T.random.uniform(-1, 1, bs, dt) }
  end,
  reference = function(data, b, o) return dense_product(dense(data, o.batched), b, o) end,
  double_backward = true,
  cases = {
    { name = 'a.b', opts = {} },
    { name = 'a^T.b', opts = { transa = true } },
    { name = 'a.b^T', opts = { transb = true } },
    { name = 'batched', opts = { batched = true } },
  },
})

function_spec.describe('F.sparse_matmul (sparse b)', {
  fn = function(a, data, o) return F.sparse_matmul(a, coo(data, o.batched), { transa = o.transa, transb = o.transb }) end,
  inputs = function(dt, o)
    local ashape = o.transb and { 2, 4 } or { 2, 3 }
    if o.transa then ashape = { ashape[2], ashape[1] } end
    local ds, as = operand_shapes(o, ashape)
    return { T.random.uniform(-1, 1, as, dt), T.random.uniform(-1, 1, ds, dt) }
  end,
  reference = function(a, data, o) return dense_product(a, dense(data, o.batched), o) end,
  double_backward = true,
  cases = {
    { name = 'a.b', opts = {} },
    { name = 'a.b^T', opts = { transb = true } },
    { name = 'a^T.b^T', opts = { transa = true, transb = true } },
    { name = 'batched', opts = { batched = true } },
  },
})

describe('chainer.utils.CooMatrix / to_coo', function()
  it('to_coo lists the non-zeros in C order, padded to ldnz', function()
    local x = T.array({ { 0, 2, 0 }, { -1, 0, 0 } }, 'float32')
    local sp = chainer.utils.to_coo(x, 4)
    assert.are.same({ 2, -1, 0, 0 }, sp.data.array:totable())
    assert.are.same({ 0, 1, -1, -1 }, sp.row:totable())
    assert.are.same({ 1, 0, -1, -1 }, sp.col:totable())
    assert.are.same({ 2, 3 }, sp.shape)
    assert.are.equal('C', sp.order)
    assert.are.same(x:totable(), sp:to_dense():totable())
    assert.is_false(sp.data.requires_grad)
  end)

  it('to_coo pads each matrix of a batch to the most non-zeros', function()
    local x = T.array({ { { 1, 0 }, { 0, 2 } }, { { 0, 0 }, { 3, 0 } } }, 'float64')
    local sp = chainer.utils.to_coo(x, { requires_grad = true })
    assert.are.same({ { 1, 2 }, { 3, 0 } }, sp.data.array:totable())
    assert.are.same({ { 0, 1 }, { 1, -1 } }, sp.row:totable())
    assert.are.same(x:totable(), sp:to_dense():totable())
    assert.is_true(sp.data.requires_grad)
  end)

  it('gives the gradient to the Variable passed as data', function()
    local data = chainer.Variable(T.array({ 1, 2 }, 'float64'))
    local sp = chainer.utils.CooMatrix(data, T.array({ 0, 1 }, 'int32'), T.array({ 1, 0 }, 'int32'), { 2, 2 })
    local y = F.sum(F.sparse_matmul(sp, T.array({ { 1, 10 }, { 100, 1000 } }, 'float64')))
    y:backward()
    assert.are.same({ 1100, 11 }, data.grad:totable())
  end)

  it('rejects bad arguments with the function name', function()
    local r, c = T.array({ 0 }, 'int32'), T.array({ 0 }, 'int32')
    local d = T.array({ 1 }, 'float32')
    assert.has_error(function() chainer.utils.CooMatrix(d, r, c, { 0, 2 }) end,
      'CooMatrix: shape[1] must be a positive integer (got 0)')
    assert.has_error(function() chainer.utils.CooMatrix(d, T.array({ 0, 1 }, 'int32'), c, { 2, 2 }) end,
      'CooMatrix: data, row and col must have the same shape (got (1,), (2,), (1,))')
    assert.has_error(function() chainer.utils.CooMatrix(d, T.array({ 5 }, 'int32'), c, { 2, 2 }) end,
      'CooMatrix: row / col indices must be below shape {2, 2}')
    assert.has_error(function() chainer.utils.CooMatrix(d, r, c, { 2, 2 }, 'Z') end)
    assert.has_error(function() chainer.utils.to_coo(T.zeros({ 3 })) end, 'to_coo: x must be 2-d or 3-d, got shape (3,)')
    local sp = chainer.utils.CooMatrix(d, r, c, { 2, 3 })
    assert.has_error(function() F.sparse_matmul(sp, T.zeros({ 2, 2 })) end,
      'sparse_matmul: shapes do not match: a is 2x3 and b 2x2 (after transa / transb)')
    assert.has_error(function() F.sparse_matmul(T.zeros({ 2, 2 }), T.zeros({ 2, 2 })) end,
      'sparse_matmul: exactly one of a and b must be a chainer.utils.CooMatrix (got tensor and tensor)')
    assert.has_error(function() F.sparse_matmul(sp, T.zeros({ 3, 2 }, 'float64')) end,
      'sparse_matmul: the sparse values are float32, b is float64')
    assert.has_error(function() F.sparse_matmul(sp, T.zeros({ 3 })) end,
      'sparse_matmul: the dense operand must be 2-d or 3-d (batched), got shape (3,)')
  end)
end)
