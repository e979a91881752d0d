local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'

function_spec.describe('F.squared_error', {
  fn = function(a, b) return F.squared_error(a, b) end,
  inputs = function(dtype, o)
    return { T.random.uniform(-1, 1, o.shape, dtype), T.random.uniform(-1, 1, o.shape, dtype) }
  end,
  reference = function(a, b) return T.square(a - b) end,
  double_backward = true,
  cases = { { name = '2-d', opts = { shape = { 3, 4 } } }, { name = '0-d', opts = { shape = {} } } },
})

describe('F.squared_error', function()
  it('values and errors', function()
    local y = F.squared_error(T.array({ 1, 2 }, 'float64'), T.array({ 3, 2 }, 'float64'))
    testing.assert_allclose(y.array, T.array({ 4, 0 }, 'float64'))
    local ok, e = pcall(F.squared_error, T.zeros({ 2 }, 'float32'), T.zeros({ 2, 1 }, 'float32'))
    assert.is_false(ok)
    assert.is_truthy(tostring(e):find('squared_error: x0 and x1 must have the same shape', 1, true))
  end)
end)
