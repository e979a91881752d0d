-- F.average_pooling_1d/2d/3d/nd
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local R = require 'functions.pooling._ref'

function_spec.describe('F.average_pooling_2d', {
  fn = function(x, o) return F.average_pooling_2d(x, o.ksize, { stride = o.stride, pad = o.pad }) end,
  inputs = function(dt) return { T.random.randn({ 2, 3, 5, 5 }, dt) } end,
  reference = function(x, o)
    local k, s, p = o.ksize, o.stride or o.ksize, o.pad or 0
    return (R.pool(x, { k, k }, { s, s }, { p, p }, false, 'avg0'))
  end,
  double_backward = true,
  cases = {
    { name = 'k2s2', opts = { ksize = 2, stride = 2 } },
    { name = 'k3s2p1 (zero padding counted)', opts = { ksize = 3, stride = 2, pad = 1 } },
  },
})

function_spec.describe('F.average_pooling_1d (pad_value = 0)', {
  fn = function(x) return F.average_pooling_1d(x, 3, { stride = 2, pad = 1 }) end,
  inputs = function(dt) return { T.random.randn({ 2, 3, 7 }, dt) } end,
  reference = function(x) return (R.pool(x, { 3 }, { 2 }, { 1 }, false, 'avg0')) end,
  double_backward = true,
})

function_spec.describe('F.average_pooling_3d', {
  fn = function(x) return F.average_pooling_3d(x, { 2, 2, 1 }, { stride = 1 }) end,
  inputs = function(dt) return { T.random.randn({ 1, 2, 3, 3, 2 }, dt) } end,
  reference = function(x) return (R.pool(x, { 2, 2, 1 }, { 1, 1, 1 }, { 0, 0, 0 }, false, 'avg0')) end,
  double_backward = true,
})

function_spec.describe('F.average_pooling_1d (pad_value = false: padded cells excluded)', {
  fn = function(x) return F.average_pooling_1d(x, 3, { stride = 2, pad = 1, pad_value = false }) end,
  inputs = function(dt) return { T.random.randn({ 2, 3, 7 }, dt) } end,
  reference = function(x) return (R.pool(x, { 3 }, { 2 }, { 1 }, false, 'avg1')) end,
  double_backward = true,
})

function_spec.describe('F.average_pooling_nd (3-d, pad_value = false)', {
  fn = function(x) return F.average_pooling_nd(x, { 2, 3, 2 }, { stride = { 2, 2, 1 }, pad = { 1, 0, 1 }, pad_value = false }) end,
  inputs = function(dt) return { T.random.randn({ 1, 2, 3, 4, 3 }, dt) } end,
  reference = function(x) return (R.pool(x, { 2, 3, 2 }, { 2, 2, 1 }, { 1, 0, 1 }, false, 'avg1')) end,
  double_backward = true,
})

describe('F.average_pooling_nd with pad_value = false (Python None)', function()
  it('divides by the number of cells inside the input', function()
    local x = T.random.randn({ 2, 3, 7 }, 'float64')
    local y = F.average_pooling_nd(x, 3, { stride = 2, pad = 1, pad_value = false })
    local want = R.pool(x, { 3 }, { 2 }, { 1 }, false, 'avg1')
    chainer.testing.assert_allclose(y.array, want, { atol = 1e-12, rtol = 1e-12 })
  end)
  it("divides each gy[o] by its window's in-bounds cell count (as Chainer)", function()
    local x = chainer.Variable(T.zeros({ 1, 1, 5 }, 'float64'))
    local y = F.average_pooling_1d(x, 3, { stride = 2, pad = 1, pad_value = false })
    y.grad = T.array({ { { 2, 30, 200 } } }, 'float64')
    y:backward()
    -- windows [-1, 1] (2 cells inside), [1, 3] (3 cells), [3, 5] (2 cells)
    assert.are.same({ { { 1, 11, 10, 110, 100 } } }, x.grad:totable())
  end)
end)

describe('F.average_pooling_2d', function()
  it('matches hand-computed values', function()
    local x = T.arange(16, 'float64'):reshape({ 1, 1, 4, 4 })
    assert.are.same({ { { { 2.5, 4.5 }, { 10.5, 12.5 } } } }, F.average_pooling_2d(x, 2).array:totable())
    local y = F.average_pooling_2d(T.ones({ 1, 1, 2, 2 }, 'float64'), 3, { stride = 2, pad = 1 })
    assert.are.same({ { { { 4 / 9 } } } }, y.array:totable())
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.average_pooling_2d(T.zeros({ 1, 1, 4, 4 }), 2, { pad_value = false }) end,
      "average_pooling_2d: unknown option 'pad_value'")
    assert.error_matches(function() F.average_pooling_nd(T.zeros({ 1, 1, 4 }), 2, { pad_value = 1 }) end,
      'average_pooling_nd: pad_value must be 0 or false')
    assert.error_matches(function() F.average_pooling_1d(T.zeros({ 1, 4 }), 2) end, 'average_pooling_1d: x must be 3%-d')
  end)
end)
