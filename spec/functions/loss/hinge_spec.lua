local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'

local function bottom(x, t)
  local n, k = x.shape[1], x.shape[2]
  local onehot = T.eq(t:astype('int64'):reshape({ n, 1 }), T.arange(0, k, 1, 'int64'):reshape({ 1, k }))
  return T.maximum(x * (1 - onehot:astype(x.dtype) * 2) + 1, 0):astype(x.dtype)
end

-- scores away from the kink 1 + s x = 0
local function inputs(dtype)
  local x = T.random.uniform(0.2, 0.8, { 4, 3 }, dtype) * T.sign(T.random.uniform(-1, 1, { 4, 3 }, dtype)) * 2
  return { x, T.random.randint(0, 3, { 4 }, 'int32') }
end

function_spec.describe('F.hinge', {
  fn = function(x, t, o) return F.hinge(x, t, o.norm, o.reduce) end,
  inputs = inputs,
  reference = function(x, t, o)
    local b = bottom(x, t)
    local loss = o.norm == 'L1' and b or b * b
    if o.reduce == 'mean' then return (T.sum(loss) * (1 / x.shape[1])):astype(x.dtype) end
    return loss
  end,
  cases = {
    { name = 'L1 no', opts = { norm = 'L1', reduce = 'no' } },
    { name = 'L2 no', opts = { norm = 'L2', reduce = 'no' } },
    { name = 'L1 mean', opts = { norm = 'L1', reduce = 'mean' } },
    { name = 'L2 mean', opts = { norm = 'L2', reduce = 'mean' } },
  },
})

describe('F.hinge', function()
  it('mean divides the loss and its gradient by N (as Chainer)', function()
    local x = chainer.Variable(T.array({ { 0.5, -0.2 }, { 0.3, 0.9 } }, 'float64'))
    local t = T.array({ 0, 1 }, 'int32')
    local y = F.hinge(x, t)
    -- bottoms: [[0.5, 0.8], [1.3, 0.1]]
    assert.is_true(math.abs(y.array:item() - (0.5 + 0.8 + 1.3 + 0.1) / 2) < 1e-12)
    y:backward()
    testing.assert_allclose(x.grad, T.array({ { -0.5, 0.5 }, { 0.5, -0.5 } }, 'float64'))
    local y2 = F.hinge(x, t, { norm = 'L2' })
    assert.is_true(math.abs(y2.array:item() - (0.25 + 0.64 + 1.69 + 0.01) / 2) < 1e-12)
  end)
  it('rejects bad labels and options', function()
    local x = T.zeros({ 2, 3 }, 'float32')
    local ok, e = pcall(F.hinge, x, T.array({ 0, 3 }, 'int32'))
    assert.is_truthy(tostring(e):find('hinge: label t[1]', 1, true))
    ok, e = pcall(F.hinge, x, T.array({ 0, 1 }, 'float32'))
    assert.is_truthy(tostring(e):find('hinge: t must be an integer tensor', 1, true))
    ok, e = pcall(F.hinge, x, T.array({ 0, 1, 2 }, 'int32'))
    assert.is_truthy(tostring(e):find('t must have shape (2,)', 1, true))
    ok, e = pcall(F.hinge, x, T.array({ 0, 1 }, 'int32'), 'L3')
    assert.is_truthy(tostring(e):find("norm must be 'L1' or 'L2'", 1, true))
  end)
end)
