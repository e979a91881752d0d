-- F.batch_normalization, F.fixed_batch_normalization, F.batch_renormalization
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'

-- reference: tensor ops over the reduced axes
local function bn_ref(x, gamma, beta, axes, eps)
  local m = 1
  for _, a in ipairs(axes) do m = m * x.shape[a + 1] end
  local eshape = {}
  local red = {}
  for _, a in ipairs(axes) do red[a] = true end
  for a = 0, x.ndim - 1 do eshape[a + 1] = red[a] and 1 or x.shape[a + 1] end
  local mean = T.sum(x, { axis = axes, keepdims = true }) / m
  local var = T.sum((x - mean) * (x - mean), { axis = axes, keepdims = true }) / m
  return (x - mean) / T.sqrt(var + eps) * gamma:reshape(eshape) + beta:reshape(eshape)
end

local function params(dt, shape)
  return T.random.uniform(0.5, 1.5, shape, dt), T.random.randn(shape, dt)
end

function_spec.describe('F.batch_normalization', {
  fn = function(x, g, b, o) return F.batch_normalization(x, g, b, o.opts) end,
  inputs = function(dt, o)
    local g, b = params(dt, o.gshape)
    return { T.random.randn(o.xshape, dt), g, b }
  end,
  reference = function(x, g, b, o) return bn_ref(x, g, b, o.axes, (o.opts and o.opts.eps) or 2e-5) end,
  double_backward = true,
  cases = {
    { name = '4-d default axis', opts = { xshape = { 3, 2, 2, 3 }, gshape = { 2 }, axes = { 0, 2, 3 } } },
    { name = '2-d eps 1e-3', opts = { xshape = { 5, 3 }, gshape = { 3 }, axes = { 0 }, opts = { eps = 1e-3 } } },
    { name = 'axis {0, 2} (non-adjacent kept axes)',
      opts = { xshape = { 3, 2, 4, 2 }, gshape = { 2, 2 }, axes = { 0, 2 }, opts = { axis = { 0, 2 } } } },
    { name = 'axis 1 of 3-d', opts = { xshape = { 2, 4, 3 }, gshape = { 2, 3 }, axes = { 1 }, opts = { axis = 1 } } },
  },
})

function_spec.describe('F.fixed_batch_normalization', {
  fn = function(x, g, b, m, v) return F.fixed_batch_normalization(x, g, b, m, v) end,
  inputs = function(dt)
    local g, b = params(dt, { 3 })
    return { T.random.randn({ 2, 3, 2 }, dt), g, b, T.random.randn({ 3 }, dt), T.random.uniform(0.5, 2, { 3 }, dt) }
  end,
  reference = function(x, g, b, m, v)
    local e = { 1, 3, 1 }
    return (x - m:reshape(e)) / T.sqrt(v:reshape(e) + 2e-5) * g:reshape(e) + b:reshape(e)
  end,
  double_backward = true,
})

function_spec.describe('F.batch_renormalization', {
  fn = function(x, g, b) return F.batch_renormalization(x, g, b, 1.5, 0.5, {
    running_mean = T.array({ 0.1, -0.2, 0.3 }, x.dtype), running_var = T.array({ 0.8, 1.2, 2.0 }, x.dtype) }) end,
  inputs = function(dt)
    local g, b = params(dt, { 3 })
    return { T.random.randn({ 4, 3, 2 }, dt), g, b }
  end,
  reference = function(x, g, b)
    local e = { 1, 3, 1 }
    local rm = T.array({ 0.1, -0.2, 0.3 }, x.dtype):reshape(e)
    local rs = T.sqrt(T.array({ 0.8, 1.2, 2.0 }, x.dtype):reshape(e) + 2e-5)
    local mean = T.sum(x, { axis = { 0, 2 }, keepdims = true }) / 8
    local sig = T.sqrt(T.sum((x - mean) * (x - mean), { axis = { 0, 2 }, keepdims = true }) / 8 + 2e-5)
    local r = T.clip(sig / rs, 1 / 1.5, 1.5)
    local d = T.clip((mean - rm) / rs, -0.5, 0.5)
    return ((x - mean) / sig * r + d) * g:reshape(e) + b:reshape(e)
  end,
  -- r and d are constants for the gradient, so no finite-difference check
  backward = false,
})

describe('F.batch_normalization', function()
  it('updates running_mean / running_var in place with the unbiased variance', function()
    local x = T.array({ { 1, 10 }, { 2, 20 }, { 6, 30 } }, 'float64')
    local rm, rv = T.array({ 1, 2 }, 'float64'), T.array({ 3, 4 }, 'float64')
    F.batch_normalization(x, T.ones({ 2 }, 'float64'), T.zeros({ 2 }, 'float64'),
      { running_mean = rm, running_var = rv, decay = 0.5 })
    -- batch means 3, 20; unbiased variances 7, 100
    chainer.testing.assert_allclose(rm, T.array({ 2, 11 }, 'float64'), { atol = 1e-12 })
    chainer.testing.assert_allclose(rv, T.array({ 5, 52 }, 'float64'), { atol = 1e-12 })
  end)
  it('gives gamma/beta gradients sum(gy * xhat) and sum(gy)', function()
    local x = chainer.Variable(T.random.randn({ 4, 2 }, 'float64'))
    local g = chainer.Variable(T.ones({ 2 }, 'float64'))
    local b = chainer.Variable(T.zeros({ 2 }, 'float64'))
    local y = F.batch_normalization(x, g, b)
    y.grad = T.ones({ 4, 2 }, 'float64')
    y:backward()
    chainer.testing.assert_allclose(b.grad, T.full({ 2 }, 4, 'float64'), { atol = 1e-12 })
    chainer.testing.assert_allclose(g.grad, T.zeros({ 2 }, 'float64'), { atol = 1e-9 })
    chainer.testing.assert_allclose(x.grad, T.zeros({ 4, 2 }, 'float64'), { atol = 1e-9 })
  end)
  it('accepts a non-contiguous x', function()
    local base = T.random.randn({ 3, 5 }, 'float64')
    local x = base:transpose()   -- (5, 3) view
    local g, b = T.ones({ 3 }, 'float64'), T.zeros({ 3 }, 'float64')
    chainer.testing.assert_allclose(F.batch_normalization(x, g, b).array,
      F.batch_normalization(x:contiguous(), g, b).array, { atol = 1e-12 })
  end)
  it('rejects bad inputs', function()
    local x = T.zeros({ 4, 3 })
    assert.error_matches(function() F.batch_normalization(x, T.ones({ 2 }), T.zeros({ 3 })) end,
      'batch_normalization: gamma has shape %(2,?%), expected %(3,?%)')
    assert.error_matches(function() F.batch_normalization(x, T.ones({ 3 }, 'float64'), T.zeros({ 3 })) end,
      'batch_normalization: gamma has dtype float64 but x has float32')
    assert.error_matches(function() F.batch_normalization(x, T.ones({ 3 }), T.zeros({ 3 }), { axis = 2 }) end,
      'batch_normalization: axis 2 is out of range')
    assert.error_matches(function() F.batch_normalization(x, T.ones({ 3 }), T.zeros({ 3 }), { epsilon = 1 }) end,
      "batch_normalization: unknown option 'epsilon'")
    assert.error_matches(function() F.batch_normalization(T.zeros({ 4, 3 }, 'int32'), T.ones({ 3 }), T.zeros({ 3 })) end,
      'batch_normalization: x must be a float tensor')
  end)
end)

describe('F.batch_renormalization', function()
  it('is x / sqrt(1 + eps) with running stats (0, 1) and loose clips; updates stats on request', function()
    local x = T.random.randn({ 4, 3, 2 }, 'float64')
    local rm, rv = T.zeros({ 3 }, 'float64'), T.ones({ 3 }, 'float64')
    local y = F.batch_renormalization(x, T.ones({ 3 }, 'float64'), T.zeros({ 3 }, 'float64'), 100, 100,
      { running_mean = rm, running_var = rv, update_statistics = true })
    chainer.testing.assert_allclose(y.array, x / math.sqrt(1 + 2e-5), { atol = 1e-12 })
    local mean = T.sum(x, { axis = { 0, 2 } }) / 8
    chainer.testing.assert_allclose(rm, mean * 0.1, { atol = 1e-12 })
  end)
  it('updates running_var with the unbiased batch variance, without eps (as Chainer)', function()
    local x = T.random.randn({ 4, 3, 2 }, 'float64')
    local rm, rv = T.zeros({ 3 }, 'float64'), T.ones({ 3 }, 'float64')
    -- a large eps, so that adding it to the variance would show
    local y = F.batch_renormalization(x, T.ones({ 3 }, 'float64'), T.zeros({ 3 }, 'float64'), 100, 100,
      { eps = 0.5, running_mean = rm, running_var = rv, update_statistics = true })
    chainer.testing.assert_allclose(y.array, x / math.sqrt(1.5), { atol = 1e-12 })
    local mean = T.sum(x, { axis = { 0, 2 } }) / 8
    local xc = x - mean:reshape({ 1, 3, 1 })
    local var = T.sum(xc * xc, { axis = { 0, 2 } }) / 8
    chainer.testing.assert_allclose(rv, var * (0.1 * 8 / 7) + 0.9, { atol = 1e-12 })
  end)
end)
