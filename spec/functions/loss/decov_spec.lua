local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'

function_spec.describe('F.decov', {
  fn = function(h, o) return F.decov(h, o) end,
  inputs = function(dtype) return { T.random.uniform(-1, 1, { 5, 3 }, dtype) } end,
  reference = function(h, o)
    local hc = h - T.mean(h, { axis = 0, keepdims = true })
    local c = T.matmul(hc:transpose(), hc) / h.shape[1] * (1 - T.eye(3, 3, 0, h.dtype))
    if o.reduce == 'no' then return c end
    return T.sum(c * c) * 0.5
  end,
  double_backward = true,
  cases = { { name = 'half_squared_sum', opts = {} }, { name = 'no', opts = { reduce = 'no' } } },
})

describe('F.decov', function()
  it('is 0 for uncorrelated columns; errors', function()
    local h = T.array({ { 1, 1 }, { -1, 1 }, { 1, -1 }, { -1, -1 } }, 'float64')
    assert.is_true(math.abs(F.decov(h).array:item()) < 1e-15)
    local ok, e = pcall(F.decov, T.zeros({ 4 }, 'float32'))
    assert.is_truthy(tostring(e):find('decov: h must be 2-d', 1, true))
  end)
end)
