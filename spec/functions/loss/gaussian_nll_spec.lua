local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'

local red = require('helpers').reduce_loss

function_spec.describe('F.gaussian_nll', {
  fn = function(x, m, v, o) return F.gaussian_nll(x, m, v, o) end,
  inputs = function(dtype)
    return { T.random.uniform(-1, 1, { 3, 4 }, dtype), T.random.uniform(-1, 1, { 3, 4 }, dtype),
      T.random.uniform(-1, 1, { 3, 4 }, dtype) }
  end,
  reference = function(x, m, v, o)
    return red((v + math.log(2 * math.pi)) * 0.5 + T.square(x - m) * T.exp(-v) * 0.5, o)
  end,
  double_backward = true,
  cases = { { name = 'sum', opts = {} }, { name = 'no', opts = { reduce = 'no' } } },
})

describe('F.gaussian_nll', function()
  it('hand value and errors', function()
    local y = F.gaussian_nll(T.array({ 1 }, 'float64'), T.array({ 0 }, 'float64'), T.array({ 0 }, 'float64'))
    assert.is_true(math.abs(y.array:item() - (0.5 * math.log(2 * math.pi) + 0.5)) < 1e-12)
    local ok, e = pcall(F.gaussian_nll, T.zeros({ 2 }, 'float32'), T.zeros({ 2 }, 'float32'), T.zeros({ 3 }, 'float32'))
    assert.is_truthy(tostring(e):find('gaussian_nll: x and ln_var must have the same shape', 1, true))
  end)
end)
