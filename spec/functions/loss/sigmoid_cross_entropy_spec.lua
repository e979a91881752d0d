local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'

local function reference(x, t, o)
  local tf = t:astype(x.dtype)
  local valid = T.ne(t, -1):astype(x.dtype)
  local p = T.sigmoid(x)
  local loss = -(tf * T.log(p) + (1 - tf) * T.log(1 - p)) * valid
  if o.reduce == 'no' then return loss end
  local n = o.normalize == false and x.shape[1] or math.max(1, T.sum(valid):item())
  return T.sum(loss) / n
end

function_spec.describe('F.sigmoid_cross_entropy', {
  fn = function(x, t, o) return F.sigmoid_cross_entropy(x, t, o) end,
  inputs = function(dtype)
    return { T.random.uniform(-3, 3, { 3, 4 }, dtype), T.random.randint(-1, 2, { 3, 4 }, 'int32') }
  end,
  reference = reference,
  double_backward = true,
  cases = { { name = 'mean', opts = {} }, { name = 'no', opts = { reduce = 'no' } },
    { name = 'normalize=false', opts = { normalize = false } } },
})

describe('F.sigmoid_cross_entropy', function()
  it('is stable for large logits and 0 when all are ignored', function()
    local y = F.sigmoid_cross_entropy(T.array({ { 100, -100 } }, 'float32'), T.array({ { 1, 0 } }, 'int32'))
    assert.is_true(math.abs(y.array:item()) < 1e-6)
    local z = F.sigmoid_cross_entropy(T.array({ { 1, 2 } }, 'float32'), T.array({ { -1, -1 } }, 'int32'))
    assert.are.equal(0, z.array:item())
    local yn = F.sigmoid_cross_entropy(T.array({ { 0 } }, 'float64'), T.array({ { 1 } }, 'int32'), { reduce = 'no' })
    testing.assert_allclose(yn.array, T.array({ { math.log(2) } }, 'float64'))
  end)
  it('rejects bad labels', function()
    local x = T.zeros({ 2, 2 }, 'float32')
    local ok, e = pcall(F.sigmoid_cross_entropy, x, T.array({ { 0, 2 }, { 1, 1 } }, 'int32'))
    assert.is_truthy(tostring(e):find('sigmoid_cross_entropy: label t[1]', 1, true))
    ok, e = pcall(F.sigmoid_cross_entropy, x, T.zeros({ 2, 2 }, 'float32'))
    assert.is_truthy(tostring(e):find('t must be an integer tensor', 1, true))
    ok, e = pcall(F.sigmoid_cross_entropy, x, T.zeros({ 2 }, 'int32'))
    assert.is_truthy(tostring(e):find('x and t must have the same shape', 1, true))
  end)
end)
