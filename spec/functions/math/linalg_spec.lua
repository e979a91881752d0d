-- F.inv, F.batch_inv, F.det, F.batch_det, F.tensordot, F.einsum,
-- F.batch_matmul, F.matmul (transa/transb/batched)
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local U = T.random.uniform

-- well-conditioned matrices: identity plus a small random part
local function mats(dt, shape)
  local n = shape[#shape]
  local e = T.eye(n, n, 0, 'float64')
  return (U(-0.3, 0.3, shape, 'float64') + e):astype(dt)
end

function_spec.describe('F.inv', {
  fn = function(a) return F.inv(a) end, inputs = function(dt) return { mats(dt, { 3, 3 }) } end,
  reference = function(a) return T.solve(a, T.eye(3, 3, 0, a.dtype)) end, double_backward = true,
})
function_spec.describe('F.batch_inv', {
  fn = function(a) return F.batch_inv(a) end, inputs = function(dt) return { mats(dt, { 2, 3, 3 }) } end,
  reference = function(a) return T.solve(a, T.eye(3, 3, 0, a.dtype):broadcast_to({ 2, 3, 3 })) end,
  double_backward = true,
})
local function det3(m)
  return m[1][1] * (m[2][2] * m[3][3] - m[2][3] * m[3][2]) - m[1][2] * (m[2][1] * m[3][3] - m[2][3] * m[3][1])
    + m[1][3] * (m[2][1] * m[3][2] - m[2][2] * m[3][1])
end
function_spec.describe('F.det', {
  fn = function(a) return F.det(a) end, inputs = function(dt) return { mats(dt, { 3, 3 }) } end,
  reference = function(a) return T.array(det3(a:astype('float64'):totable()), a.dtype) end, double_backward = true,
})
function_spec.describe('F.batch_det', {
  fn = function(a) return F.batch_det(a) end, inputs = function(dt) return { mats(dt, { 2, 3, 3 }) } end,
  reference = function(a)
    local m = a:astype('float64'):totable()
    return T.array({ det3(m[1]), det3(m[2]) }, a.dtype)
  end,
  double_backward = true,
})
function_spec.describe('F.tensordot', {
  fn = function(a, b, o) return F.tensordot(a, b, o.axes) end,
  inputs = function(dt, o) return { U(-1, 1, o.sa, dt), U(-1, 1, o.sb, dt) } end,
  reference = function(a, b, o) return T.tensordot(a, b, o.axes) end, double_backward = true,
  cases = {
    { name = 'axes1', opts = { axes = 1, sa = { 2, 3, 4 }, sb = { 4, 5 } } },
    { name = 'axes2', opts = { axes = 2, sa = { 2, 3, 4 }, sb = { 3, 4, 2 } } },
    { name = 'pairs', opts = { axes = { { 0, 2 }, { 2, 0 } }, sa = { 2, 3, 4 }, sb = { 4, 5, 2 } } },
    { name = 'outer', opts = { axes = 0, sa = { 2, 3 }, sb = { 2 } } },
  },
})
function_spec.describe('F.einsum', {
  fn = function(a, b, o) return F.einsum(o.s, a, b) end,
  inputs = function(dt, o) return { U(-1, 1, o.sa, dt), U(-1, 1, o.sb, dt) } end,
  reference = function(a, b, o) return o.ref(a, b) end,
  cases = {
    { name = 'batched matmul', opts = { s = 'bij,bjk->bik', sa = { 2, 3, 4 }, sb = { 2, 4, 2 }, ref = T.matmul } },
    { name = 'implicit', opts = { s = 'ij,jk', sa = { 3, 4 }, sb = { 4, 2 }, ref = T.matmul } },
    { name = 'outer', opts = { s = 'i,j->ij', sa = { 3 }, sb = { 2 }, ref = T.outer } },
    { name = 'dot+sum', opts = { s = 'ij,ij->', sa = { 3, 4 }, sb = { 3, 4 }, ref = function(a, b) return T.sum(a * b) end } },
    { name = 'transposed', opts = { s = 'ij,kj->ki', sa = { 3, 4 }, sb = { 2, 4 },
      ref = function(a, b) return T.matmul(b, a, { transb = true }) end } },
    { name = 'ellipsis', opts = { s = '...ij,...jk->...ik', sa = { 2, 3, 4 }, sb = { 2, 4, 2 }, ref = T.matmul } },
    { name = 'summed index', opts = { s = 'ij,k->i', sa = { 3, 4 }, sb = { 2 },
      ref = function(a, b) return T.sum(a, { axis = 1 }) * T.sum(b) end } },
  },
})
function_spec.describe('F.einsum (double backward)', {
  fn = function(a, b, o) return F.einsum(o.s, a, b) end,
  inputs = function(dt, o) return { U(-1, 1, o.sa, dt), U(-1, 1, o.sb, dt) } end,
  double_backward = true,
  cases = {
    { name = 'matmul', opts = { s = 'ij,jk->ik', sa = { 2, 3 }, sb = { 3, 2 } } },
    { name = 'summed index', opts = { s = 'ij,k->i', sa = { 2, 3 }, sb = { 2 } } },
  },
})
function_spec.describe('F.batch_matmul', {
  fn = function(a, b, o) return F.batch_matmul(a, b, { transb = o.transb }) end,
  inputs = function(dt, o) return { U(-1, 1, o.sa, dt), U(-1, 1, o.sb, dt) } end,
  reference = function(a, b, o) return T.matmul(a, b, o) end,
  cases = { { name = 'plain', opts = { sa = { 2, 3, 4 }, sb = { 2, 4, 5 } } },
    { name = 'transb', opts = { sa = { 2, 3, 4 }, sb = { 2, 5, 4 }, transb = true } } },
})
function_spec.describe('F.matmul (transa, batched)', {
  fn = function(a, b) return F.matmul(a, b, { transa = true }) end,
  inputs = function(dt) return { U(-1, 1, { 2, 4, 3 }, dt), U(-1, 1, { 2, 4, 5 }, dt) } end,
  reference = function(a, b) return T.matmul(a:transpose({ 0, 2, 1 }):copy(), b) end, double_backward = true,
})

describe('linear algebra functions', function()
  it('einsum takes diagonals and traces (forward)', function()
    local a = T.array({ { 1, 2 }, { 3, 4 } }, 'float64')
    assert.are.equal(5, F.einsum('ii', a).array:item())
    assert.are.same({ 1, 4 }, F.einsum('ii->i', a).array:totable())
    assert.are.same({ { 1, 3 }, { 2, 4 } }, F.einsum('ij->ji', a).array:totable())
    assert.are.equal(10, F.einsum('ij->', a).array:item())
  end)
  it('einsum with three operands', function()
    local a, b, c = U(-1, 1, { 2, 3 }, 'float64'), U(-1, 1, { 3, 4 }, 'float64'), U(-1, 1, { 4 }, 'float64')
    local y = F.einsum('ij,jk,k->i', a, b, c).array
    local want = T.matmul(T.matmul(a, b), c)
    assert.is_true(T.max(T.abs(y - want)):item() < 1e-14)
  end)
  it('batch_matmul treats 2-d operands as batches of column vectors', function()
    local a, b = U(-1, 1, { 2, 3 }, 'float64'), U(-1, 1, { 2, 3 }, 'float64')
    local y = F.batch_matmul(a, b, { transa = true }).array
    assert.are.same({ 2, 1, 1 }, y.shape)
    assert.is_true(math.abs(y:totable()[1][1][1] - T.sum(a:slice(0) * b:slice(0)):item()) < 1e-15)
  end)
  it('det of a known matrix', function()
    assert.is_true(math.abs(F.det(T.array({ { 4, 7 }, { 2, 6 } }, 'float64')).array:item() - 10) < 1e-12)
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.inv(T.zeros({ 2, 3 })) end, 'inv: the matrices must be square')
    assert.error_matches(function() F.batch_inv(T.zeros({ 2, 2 })) end, 'batch_inv: a must be a batch of square matrices')
    assert.error_matches(function() F.det(T.zeros({ 2, 2, 2 })) end, 'det: a must be a square matrix')
    assert.error_matches(function() F.einsum('ij,jk', T.zeros({ 2, 3 })) end, 'einsum: the subscripts name 2 operands but 1 were given')
    assert.error_matches(function() F.einsum('ij,jk', T.zeros({ 2, 3 }), T.zeros({ 4, 2 })) end,
      "einsum: subscript 'j' has size 3 in one operand and 4 in another")
    assert.error_matches(function() F.einsum('ij->k', T.zeros({ 2, 3 })) end, "einsum: output subscript 'k' does not appear")
    assert.error_matches(function() F.tensordot(T.zeros({ 2, 3 }), T.zeros({ 4 }), 1) end,
      'tensordot: axis 1 of a %(size 3%) and axis 0 of b %(size 4%) differ')
  end)
end)
