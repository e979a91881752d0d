local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'

function_spec.describe('F.mean_squared_error', {
  fn = function(a, b) return F.mean_squared_error(a, b) end,
  inputs = function(dtype, o)
    return { T.random.uniform(-1, 1, o.shape, dtype), T.random.uniform(-1, 1, o.shape, dtype) }
  end,
  reference = function(a, b) return T.mean(T.square(a - b)) end,
  double_backward = true,
  cases = { { name = '2-d', opts = { shape = { 3, 4 } } }, { name = '0-d', opts = { shape = {} } },
    { name = '3-d', opts = { shape = { 2, 1, 3 } } } },
})

describe('F.mean_squared_error', function()
  it('hand-computed value, 0-d output', function()
    local y = F.mean_squared_error(T.array({ 1, 2, 3 }, 'float32'), T.array({ 1, 0, 0 }, 'float32'))
    assert.are.same({}, y.shape)
    assert.is_true(math.abs(y.array:item() - 13 / 3) < 1e-6)
  end)
  it('non-contiguous inputs', function()
    local a = T.arange(0, 6, 1, 'float64'):reshape({ 2, 3 })
    local y = F.mean_squared_error(a:transpose(), T.zeros({ 3, 2 }, 'float64'))
    assert.is_true(math.abs(y.array:item() - 55 / 6) < 1e-12)
  end)
  it('errors name the function and arguments', function()
    local ok, e = pcall(F.mean_squared_error, T.zeros({ 2 }, 'float32'), T.zeros({ 3 }, 'float32'))
    assert.is_false(ok)
    assert.is_truthy(tostring(e):find('mean_squared_error: x0 and x1 must have the same shape', 1, true))
    ok, e = pcall(F.mean_squared_error, T.zeros({ 2 }, 'float32'), T.zeros({ 2 }, 'float64'))
    assert.is_truthy(tostring(e):find('same dtype', 1, true))
    ok, e = pcall(F.mean_squared_error, T.zeros({ 2 }, 'int32'), T.zeros({ 2 }, 'int32'))
    assert.is_truthy(tostring(e):find('x0 must be a float tensor', 1, true))
  end)
end)
