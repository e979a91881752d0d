local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'

local function reference(x0, x1, y, o)
  local d = T.sqrt(T.sum(T.square(x0 - x1), { axis = 1 }))
  local yf = y:astype(x0.dtype)
  local m = T.maximum(o.margin - d, 0)
  local l = (yf * d * d + (1 - yf) * m * m) * 0.5
  if o.reduce == 'no' then return l:astype(x0.dtype) end
  return (T.sum(l) / x0.shape[1]):astype(x0.dtype)
end

function_spec.describe('F.contrastive', {
  fn = function(a, b, y, o) return F.contrastive(a, b, y, o.margin, o.reduce) end,
  inputs = function(dtype)
    return { T.random.uniform(-1, 1, { 4, 3 }, dtype), T.random.uniform(-1, 1, { 4, 3 }, dtype),
      T.array({ 1, 0, 0, 1 }, 'int32') }
  end,
  reference = reference,
  double_backward = true,
  cases = { { name = 'margin 1', opts = { margin = 1 } }, { name = 'margin 2 no', opts = { margin = 2, reduce = 'no' } } },
})

describe('F.contrastive', function()
  it('identical rows give finite gradients; errors', function()
    local x0 = chainer.Variable(T.ones({ 2, 3 }, 'float64'))
    local y = F.contrastive(x0, T.ones({ 2, 3 }, 'float64'), T.array({ 1, 0 }, 'int32'))
    assert.is_true(math.abs(y.array:item() - 0.25) < 1e-12)
    y:backward()
    testing.assert_allclose(x0.grad, T.zeros({ 2, 3 }, 'float64'))
    local ok, e = pcall(F.contrastive, T.zeros({ 2, 3 }, 'float32'), T.zeros({ 2, 3 }, 'float32'), T.zeros({ 3 }, 'int32'))
    assert.is_truthy(tostring(e):find('contrastive: y must have shape (2,)', 1, true))
    ok, e = pcall(F.contrastive, T.zeros({ 2, 3 }, 'float32'), T.zeros({ 2, 3 }, 'float32'), T.zeros({ 2 }, 'int32'), -1)
    assert.is_truthy(tostring(e):find('margin must be a positive number', 1, true))
  end)
end)
