local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'

-- inputs kept away from x0 == x1, where |.| has a kink
local function inputs(dtype)
  local a = T.random.uniform(-1, 1, { 3, 4 }, dtype)
  local d = T.random.uniform(0.1, 1, { 3, 4 }, dtype) * T.sign(T.random.uniform(-1, 1, { 3, 4 }, dtype))
  return { a, a + d }
end

function_spec.describe('F.absolute_error', {
  fn = function(a, b) return F.absolute_error(a, b) end,
  inputs = inputs,
  reference = function(a, b) return T.abs(a - b) end,
  double_backward = true,
})

describe('F.absolute_error', function()
  it('values, zero gradient at equality, errors', function()
    local a = chainer.Variable(T.array({ 1, 2, 3 }, 'float64'))
    local y = F.absolute_error(a, T.array({ 3, 2, 1 }, 'float64'))
    testing.assert_allclose(y.array, T.array({ 2, 0, 2 }, 'float64'))
    y.grad = T.ones({ 3 }, 'float64')
    y:backward()
    testing.assert_allclose(a.grad, T.array({ -1, 0, 1 }, 'float64'))
    local ok, e = pcall(F.absolute_error, T.zeros({ 2 }, 'float32'), T.zeros({ 3 }, 'float32'))
    assert.is_false(ok)
    assert.is_truthy(tostring(e):find('absolute_error: x0 and x1', 1, true))
  end)
end)
