local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'

function_spec.describe('F.bernoulli_nll', {
  fn = function(x, y, o) return F.bernoulli_nll(x, y, o) end,
  inputs = function(dtype) return { T.random.uniform(0, 1, { 3, 4 }, dtype), T.random.uniform(-3, 3, { 3, 4 }, dtype) } end,
  reference = function(x, y, o)
    local p = T.sigmoid(y)
    local l = -(x * T.log(p) + (1 - x) * T.log(1 - p))
    if o.reduce == 'no' then return l end
    return T.sum(l)
  end,
  double_backward = true,
  cases = { { name = 'sum', opts = {} }, { name = 'no', opts = { reduce = 'no' } } },
})

describe('F.bernoulli_nll', function()
  it('is stable for large logits; errors', function()
    local y = F.bernoulli_nll(T.array({ 1, 0 }, 'float32'), T.array({ 200, -200 }, 'float32'))
    assert.is_true(math.abs(y.array:item()) < 1e-6)
    local ok, e = pcall(F.bernoulli_nll, T.zeros({ 2 }, 'float32'), T.zeros({ 2 }, 'float64'))
    assert.is_truthy(tostring(e):find('bernoulli_nll: x and y must have the same dtype', 1, true))
  end)
end)
