-- distributions.Independent: shapes, sums and products over the
-- reinterpreted axes (with gradients), the block-diagonal covariance, KL,
-- bad input.
local chainer = require 'chainer'
local D, F, T = chainer.distributions, chainer.functions, chainer.tensor
local U = T.random.uniform
local function_spec = require 'chainer.testing.function_spec'
local S = require 'distributions._support'

local x = T.array({ { 0.1, -0.4, 1.2 }, { 0.7, 0.2, -0.9 } }, 'float64')
local LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
local function normal_log(m, s, v) local z = (v - m) / s; return -(z * z) * 0.5 - T.log(s) - LOG_SQRT_2PI end
local function normal_cdf(m, s, v) return (T.erf((v - m) / (s * math.sqrt(2))) + 1) * 0.5 end
local function inputs(dt) return { U(-1, 1, { 2, 3 }, dt), U(0.5, 2, { 2, 3 }, dt) } end

local methods = {
  log_prob = function(m, s, v) return T.sum(normal_log(m, s, v), { axis = 1 }) end,
  prob = function(m, s, v) return T.prod(T.exp(normal_log(m, s, v)), { axis = 1 }) end,
  cdf = function(m, s, v) return T.prod(normal_cdf(m, s, v), { axis = 1 }) end,
  log_cdf = function(m, s, v) return T.sum(T.log(normal_cdf(m, s, v)), { axis = 1 }) end,
  survival_function = function(m, s, v) return T.prod(1 - normal_cdf(m, s, v), { axis = 1 }) end,
}
for name, ref in pairs(methods) do
  function_spec.describe('Independent(Normal):' .. name, {
    fn = function(m, s) local d = D.Independent(D.Normal(m, s)); return d[name](d, x:astype(m.dtype)) end,
    inputs = inputs, double_backward = true,
    reference = function(m, s) return ref(m, s, x:astype(m.dtype)) end,
  })
end
function_spec.describe('Independent(Normal).entropy', {
  fn = function(m, s) return D.Independent(D.Normal(m, s)).entropy end,
  inputs = inputs, no_grads = { true, false },
  reference = function(_, s) return T.sum(T.log(s) + 0.5 * math.log(2 * math.pi * math.exp(1)), { axis = 1 }) end,
})
function_spec.describe('kl_divergence(Independent, Independent)', {
  fn = function(m1, s1, m2, s2)
    return chainer.kl_divergence(D.Independent(D.Normal(m1, s1)), D.Independent(D.Normal(m2, s2)))
  end,
  inputs = function(dt) local a, b = inputs(dt), inputs(dt); return { a[1], a[2], b[1], b[2] } end,
  reference = function(m1, s1, m2, s2)
    return T.sum(T.log(s2 / s1) + (s1 * s1 + (m1 - m2) * (m1 - m2)) / (s2 * s2 * 2) - 0.5, { axis = 1 })
  end,
})

describe('Independent', function()
  it('moves the last batch axes to the event (by default all but the first)', function()
    local n = D.Normal(T.zeros({ 4, 3, 2 }), T.ones({ 4, 3, 2 }))
    local d = D.Independent(n)
    assert.are.same({ 4 }, d.batch_shape)
    assert.are.same({ 3, 2 }, d.event_shape)
    assert.are.same({ 5, 4, 3, 2 }, d:sample(5).shape)
    assert.are.same({ 4 }, d:log_prob(T.zeros({ 4, 3, 2 })).shape)
    local d1 = D.Independent(n, 1)
    assert.are.same({ 4, 3 }, d1.batch_shape)
    assert.are.same({ 2 }, d1.event_shape)
    local d0 = D.Independent(n, 0)
    assert.are.same({ 4, 3, 2 }, d0.batch_shape)
    assert.are.equal(n.mean, d.mean)
  end)

  it('has a block-diagonal covariance over a MultivariateNormal', function()
    local L = T.array({ { { 1, 0 }, { 0.5, 2 } }, { { 3, 0 }, { -1, 1 } } }, 'float64')
    local d = D.Independent(D.MultivariateNormal(T.zeros({ 2, 2 }, 'float64'), { scale_tril = L }), 1)
    assert.are.same({}, d.batch_shape)
    assert.are.same({ 2, 2 }, d.event_shape)
    S.near(d.covariance, { 1, 0.5, 0, 0, 0.5, 4.25, 0, 0, 0, 0, 9, -3, 0, 0, -3, 2 }, 1e-12)
  end)

  it('rejects bad input', function()
    local n = D.Normal(T.zeros({ 4, 3 }), T.ones({ 4, 3 }))
    S.raises(function() D.Independent(n, 3) end, 'Independent', 'reinterpreted_batch_ndims', 'at most')
    S.raises(function() D.Independent(n, -1) end, 'reinterpreted_batch_ndims', 'non-negative integer')
    S.raises(function() D.Independent(T.zeros({ 2 })) end, 'Independent', 'Distribution')
    S.raises(function() D.Independent(n):icdf(T.zeros({ 4, 3 })) end, 'not invertible')
    S.raises(function() chainer.kl_divergence(D.Independent(n, 1), D.Independent(n, 0)) end, 'event shapes')
    S.raises(function() return D.Independent(n).covariance end, 'Normal', 'covariance', 'not defined')
  end)
end)
