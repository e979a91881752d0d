-- F.local_response_normalization, F.normalize
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'

local function lrn_ref(x, o)
  local n, k, alpha, beta = o.n or 5, o.k or 2, o.alpha or 1e-4, o.beta or 0.75
  local C = x.shape[2]
  local x2 = x * x
  local parts = {}
  for c = 0, C - 1 do
    local lo, hi = math.max(0, c - math.floor(n / 2)), math.min(C - 1, c + math.floor(n / 2))
    parts[#parts + 1] = T.sum(x2:slice({}, { lo, hi + 1 }), { axis = 1, keepdims = true })
  end
  local s = T.concat(parts, 1)
  return x / T.pow(s * alpha + k, beta)
end

function_spec.describe('F.local_response_normalization', {
  fn = function(x, o) return F.local_response_normalization(x, o) end,
  inputs = function(dt) return { T.random.randn({ 2, 7, 2, 3 }, dt) } end,
  reference = lrn_ref,
  cases = {
    { name = 'default', opts = {} },
    { name = 'n3 k1 alpha0.5 beta0.75', opts = { n = 3, k = 1, alpha = 0.5, beta = 0.75 } },
    { name = 'n4 (even: window n // 2 each side)', opts = { n = 4, alpha = 0.1 } },
  },
})

function_spec.describe('F.normalize', {
  fn = function(x, o) return F.normalize(x, o) end,
  inputs = function(dt) return { T.random.randn({ 3, 4, 2 }, dt) } end,
  reference = function(x, o)
    local axis = o.axis or 1
    local norm = T.sqrt(T.sum(x * x, { axis = axis, keepdims = true }))
    return x / (norm + (o.eps or 1e-5))
  end,
  double_backward = true,
  cases = { { name = 'axis 1', opts = {} }, { name = 'axis -1 eps 0.1', opts = { axis = -1, eps = 0.1 } },
    { name = 'axes {1, 2}', opts = { axis = { 1, 2 } } } },
})

describe('F.local_response_normalization', function()
  it('matches a hand-computed value and refuses double backprop like Chainer', function()
    local x = chainer.Variable(T.array({ { 1, 2, 3 } }, 'float64'):reshape({ 1, 3, 1 }))
    local y = F.local_response_normalization(x, { n = 3, k = 1, alpha = 1, beta = 1 })
    assert.is_true(math.abs(y.array:totable()[1][1][1] - 1 / 6) < 1e-15)   -- 1 / (1 + 1 + 4)
    local gx = chainer.grad({ F.sum(y) }, { x }, { enable_double_backprop = true })[1]
    assert.error_matches(function() chainer.grad({ F.sum(gx * gx) }, { x }) end,
      'local_response_normalization: double backprop is not supported')
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.local_response_normalization(T.zeros({ 3 })) end,
      'local_response_normalization: x must have at least 2 dimensions')
    assert.error_matches(function() F.local_response_normalization(T.zeros({ 1, 3 }), { n = 0 }) end,
      'local_response_normalization: n must be a positive integer')
  end)
end)

describe('F.normalize', function()
  it('gives finite gradients gy / eps for all-zero vectors', function()
    local x = chainer.Variable(T.zeros({ 2, 3 }, 'float64'))
    local y = F.normalize(x)
    assert.are.same({ { 0, 0, 0 }, { 0, 0, 0 } }, y.array:totable())
    y.grad = T.ones({ 2, 3 }, 'float64')
    y:backward()
    chainer.testing.assert_allclose(x.grad, T.full({ 2, 3 }, 1e5, 'float64'), { rtol = 1e-9 })
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.normalize(T.zeros({ 2, 3 }), { axis = 2 }) end, 'normalize: axis 2 is out of range')
    assert.error_matches(function() F.normalize(T.zeros({ 2, 3 }, 'int64')) end, 'normalize: x must be a float tensor')
  end)
end)
