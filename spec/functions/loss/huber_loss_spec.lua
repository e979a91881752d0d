local chainer = require 'chainer'
local T = chainer.tensor
local F = chainer.functions
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'

local function reference(x, t, o)
  local d = x - t
  local a = T.abs(d)
  local l = T.where(T.le(a, o.delta), d * d * 0.5, (a - o.delta * 0.5) * o.delta):astype(x.dtype)
  if o.reduce == 'no' then return l end
  return T.sum(l, { axis = 1 })
end

-- |x - t| kept away from delta (the kink of the second derivative)
local function inputs(dtype)
  local x = T.random.uniform(-1, 1, { 3, 4 }, dtype)
  local mag = T.array({ { 0.1, 0.3, 1.5, 2.0 }, { 0.2, 1.8, 0.05, 1.2 }, { 2.5, 0.4, 0.7, 1.4 } }, dtype)
  return { x, x + mag * T.sign(T.random.uniform(-1, 1, { 3, 4 }, dtype)) }
end

function_spec.describe('F.huber_loss', {
  fn = function(x, t, o) return F.huber_loss(x, t, o.delta, { reduce = o.reduce }) end,
  inputs = inputs,
  reference = reference,
  double_backward = true,
  cases = { { name = 'delta 1', opts = { delta = 1 } }, { name = 'delta 0.5 no', opts = { delta = 0.85, reduce = 'no' } } },
})

describe('F.huber_loss', function()
  it('hand values, keyword delta, errors', function()
    local x = T.array({ { 0.5, 3 } }, 'float64')
    local y = F.huber_loss(x, T.zeros({ 1, 2 }, 'float64'), { delta = 1 })
    testing.assert_allclose(y.array, T.array({ 0.125 + 2.5 }, 'float64'))
    local ok, e = pcall(F.huber_loss, x, T.zeros({ 1, 2 }, 'float64'))
    assert.is_truthy(tostring(e):find('huber_loss: delta must be a number', 1, true))
    ok, e = pcall(F.huber_loss, x, T.zeros({ 1, 2 }, 'float64'), 1, { reduce = 'mean' })
    assert.is_truthy(tostring(e):find("reduce must be 'sum_along_second_axis' or 'no'", 1, true))
  end)
end)
