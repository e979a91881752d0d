-- F.layer_normalization, F.group_normalization
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'

local function rows_ref(x2, eps)
  local d = x2.shape[2]
  local mean = T.sum(x2, { axis = 1, keepdims = true }) / d
  local var = T.sum((x2 - mean) * (x2 - mean), { axis = 1, keepdims = true }) / d
  return (x2 - mean) / T.sqrt(var + eps)
end

function_spec.describe('F.layer_normalization', {
  fn = function(x, g, b, o) return F.layer_normalization(x, g, b, o.eps and { eps = o.eps } or nil) end,
  inputs = function(dt) return { T.random.randn({ 3, 5 }, dt), T.random.uniform(0.5, 1.5, { 5 }, dt), T.random.randn({ 5 }, dt) } end,
  reference = function(x, g, b, o) return rows_ref(x, o.eps or 1e-5) * g:reshape({ 1, 5 }) + b:reshape({ 1, 5 }) end,
  double_backward = true,
  cases = { { name = 'default eps', opts = {} }, { name = 'eps 0.1', opts = { eps = 0.1 } } },
})

function_spec.describe('F.group_normalization', {
  fn = function(x, g, b) return F.group_normalization(x, 2, g, b) end,
  inputs = function(dt) return { T.random.randn({ 2, 4, 3, 2 }, dt), T.random.uniform(0.5, 1.5, { 4 }, dt), T.random.randn({ 4 }, dt) } end,
  reference = function(x, g, b)
    local xh = rows_ref(x:reshape({ 4, 12 }), 1e-5):reshape({ 2, 4, 3, 2 })
    return xh * g:reshape({ 1, 4, 1, 1 }) + b:reshape({ 1, 4, 1, 1 })
  end,
  double_backward = true,
})

describe('F.layer_normalization / F.group_normalization', function()
  it('normalizes every row to mean 0, variance 1 (eps 0)', function()
    local y = F.layer_normalization(T.random.randn({ 4, 6 }, 'float64'), T.ones({ 6 }, 'float64'),
      T.zeros({ 6 }, 'float64'), { eps = 0 }).array
    chainer.testing.assert_allclose(T.sum(y, { axis = 1 }), T.zeros({ 4 }, 'float64'), { atol = 1e-12 })
    chainer.testing.assert_allclose(T.sum(y * y, { axis = 1 }), T.full({ 4 }, 6, 'float64'), { atol = 1e-10 })
  end)
  it('rejects bad inputs', function()
    assert.error_matches(function() F.layer_normalization(T.zeros({ 3, 5 }), T.ones({ 4 }), T.zeros({ 4 })) end,
      'layer_normalization: gamma has shape %(4,?%)')
    assert.error_matches(function() F.group_normalization(T.zeros({ 2, 6, 2 }), 4, T.ones({ 6 }), T.zeros({ 6 })) end,
      'group_normalization: the number of channels 6 is not divisible by groups 4')
    assert.error_matches(function() F.group_normalization(T.zeros({ 2, 6, 2 }), 3, T.ones({ 5 }), T.zeros({ 6 })) end,
      'group_normalization: gamma has shape %(5,?%), expected %(6%)')
    assert.error_matches(function() F.group_normalization(T.zeros({ 2, 6 }), 0, T.ones({ 6 }), T.zeros({ 6 })) end,
      'group_normalization: groups must be a positive integer')
  end)
end)
