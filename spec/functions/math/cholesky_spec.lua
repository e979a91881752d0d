-- F.cholesky: the factor, Chainer's symmetric gradient (checked through a
-- symmetric parametrisation, where finite differences see it), double
-- backward, errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'
local U = T.random.uniform

-- a symmetric positive definite matrix from any square x
local function spd(x, n) return (x + F.transpose(x)) * 0.5 + T.eye(n, x.dtype) * n end

function_spec.describe('F.cholesky', {
  fn = function(x) return F.cholesky(spd(x, 4)) end,
  inputs = function(dt) return { U(-1, 1, { 4, 4 }, dt) } end,
  double_backward = true,
})

describe('F.cholesky', function()
  it('gives the lower factor L with L L^T = a, reading only the lower triangle', function()
    local a = T.array({ { 4, 12, -16 }, { 12, 37, -43 }, { -16, -43, 98 } }, 'float64')
    local L = F.cholesky(a).array
    testing.assert_allclose(L, T.array({ { 2, 0, 0 }, { 6, 1, 0 }, { -8, 5, 3 } }, 'float64'))
    local upper_ignored = T.array({ { 4, 1e3, 1e3 }, { 12, 37, -1e3 }, { -16, -43, 98 } }, 'float64')
    testing.assert_allclose(F.cholesky(upper_ignored).array, L)
  end)
  it("returns Chainer's symmetric gradient", function()
    -- f(a) = sum(L): the gradient is symmetric and its lower triangle is
    -- half of the one-sided derivative off the diagonal
    local a = chainer.Variable(T.array({ { 4, 2 }, { 2, 5 } }, 'float64'))
    F.sum(F.cholesky(a)):backward()
    local g = a.grad:totable()
    assert.are.equal(g[1][2], g[2][1])
    -- L = [[sqrt(a11), 0], [a21/sqrt(a11), sqrt(a22 - a21^2/a11)]]
    local l22 = math.sqrt(5 - 4 / 4)
    local d_a21 = 1 / 2 - (2 / 4) / l22
    assert.is_true(math.abs(g[2][1] - d_a21 / 2) < 1e-14)
    assert.is_true(math.abs(g[2][2] - 0.5 / l22) < 1e-14)
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.cholesky(T.ones({ 2, 3 }, 'float64')) end,
      'cholesky: a must be a square matrix %(n, n%) %(got shape %(2, 3%)%)')
    assert.error_matches(function() F.cholesky(T.ones({ 2, 2, 2 }, 'float64')) end, 'cholesky: a must be a square matrix')
    assert.error_matches(function() F.cholesky(T.ones({ 2, 2 }, 'int32')) end, 'cholesky: a must be a float tensor')
    assert.error_matches(function() F.cholesky(T.array({ { 1, 2 }, { 2, 1 } }, 'float64')) end,
      'cholesky: matrix is not positive definite %(its leading minor of order 2 is not%)')
  end)
end)
