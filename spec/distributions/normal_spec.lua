-- distributions.Normal: closed-form values, moments of many samples, the
-- reparameterised sample's gradient, KL against Monte Carlo, bad input.
local chainer = require 'chainer'
local D, F, T = chainer.distributions, chainer.functions, chainer.tensor
local U = T.random.uniform
local function_spec = require 'chainer.testing.function_spec'
local S = require 'distributions._support'

local function params(dt) return { U(-1, 1, { 3, 2 }, dt), U(0.5, 2, { 3, 2 }, dt) } end
local LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)

-- Each method and property against its textbook formula, with gradients
-- w.r.t. loc and scale by finite differences.
local closed_forms = S.closed_form_specs({
  name = 'Normal', make = D.Normal, inputs = params,
  x = T.array({ { -0.7, 0.2 }, { 1.3, 0.0 }, { 0.4, -1.5 } }, 'float64'),
  refs = {
    log_prob = function(m, s, x) local z = (x - m) / s; return -(z * z) * 0.5 - T.log(s) - LOG_SQRT_2PI end,
    prob = function(m, s, x) local z = (x - m) / s; return T.exp(-(z * z) * 0.5) / (s * math.sqrt(2 * math.pi)) end,
    cdf = function(m, s, x) return (T.erf((x - m) / (s * math.sqrt(2))) + 1) * 0.5 end,
    survival_function = function(m, s, x) return T.erfc((x - m) / (s * math.sqrt(2))) * 0.5 end,
    log_cdf = function(m, s, x) return T.log((T.erf((x - m) / (s * math.sqrt(2))) + 1) * 0.5) end,
    log_survival_function = function(m, s, x) return T.log(T.erfc((x - m) / (s * math.sqrt(2))) * 0.5) end,
    mean = function(m) return m end,
    mode = function(m) return m end,
    variance = function(_, s) return s * s end,
    stddev = function(_, s) return s end,
    entropy = function(_, s) return T.log(s) + 0.5 * math.log(2 * math.pi * math.exp(1)) end,
  },
})
for _, s in ipairs(closed_forms) do function_spec.describe(s[1], s[2]) end

function_spec.describe('Normal:icdf', {
  fn = function(m, s) local d = D.Normal(m, s); return d:icdf(T.full({ 3, 2 }, 0.975, m.dtype)) end,
  inputs = params,
  reference = function(m, s) return m + s * 1.959963984540054 end,
})

function_spec.describe('Normal.entropy (log_scale)', {
  fn = function(m, ls) return D.Normal(m, nil, { log_scale = ls }).entropy end,
  inputs = params,
  reference = function(_, ls) return ls + 0.5 * math.log(2 * math.pi * math.exp(1)) end,
})

-- The sample is loc + scale * eps: the same seed gives the same eps, so the
-- gradient check sees a deterministic function of loc and scale.
function_spec.describe('Normal:sample (reparameterised)', {
  fn = function(m, s) T.random.seed(11); return D.Normal(m, s):sample(4) end,
  inputs = params,
  reference = function(m, s)
    T.random.seed(11)
    local eps = T.random.normal(0, 1, { 4, 3, 2 }, m.dtype)
    return m:reshape({ 1, 3, 2 }) + s:reshape({ 1, 3, 2 }) * eps
  end,
})

function_spec.describe('kl_divergence(Normal, Normal)', {
  fn = function(m1, s1, m2, s2) return chainer.kl_divergence(D.Normal(m1, s1), D.Normal(m2, s2)) end,
  inputs = function(dt) return { U(-1, 1, { 4 }, dt), U(0.5, 2, { 4 }, dt), U(-1, 1, { 4 }, dt), U(0.5, 2, { 4 }, dt) } end,
  reference = function(m1, s1, m2, s2)
    return T.log(s2 / s1) + (s1 * s1 + (m1 - m2) * (m1 - m2)) / (s2 * s2 * 2) - 0.5
  end,
  double_backward = true,
})

describe('Normal', function()
  it('has the standard normal values at given points', function()
    local d = D.Normal(T.array({ 0 }, 'float64'), T.array({ 1 }, 'float64'))
    S.near(d:log_prob(T.array({ 0 }, 'float64')), -LOG_SQRT_2PI, 1e-12)
    S.near(d:cdf(T.array({ 1.96 }, 'float64')), 0.9750021048517795, 1e-12)
    S.near(d:icdf(T.array({ 0.5 }, 'float64')), 0, 1e-12)
    S.near(d.entropy, 1.4189385332046727, 1e-12)
  end)

  it('has batch and event shapes; sample(n) and sample(shape) prepend the sample shape', function()
    local d = D.Normal(T.zeros({ 3, 2 }), T.ones({ 3, 2 }))
    assert.are.same({ 3, 2 }, d.batch_shape)
    assert.are.same({}, d.event_shape)
    assert.are.same({ 3, 2 }, d:sample().shape)
    assert.are.same({ 5, 3, 2 }, d:sample(5).shape)
    assert.are.same({ 4, 5, 3, 2 }, d:sample({ 4, 5 }).shape)
    assert.are.same({ 7, 3, 2 }, d:sample_n(7).shape)
    assert.are.equal(d.scale, d.scale)   -- computed once
  end)

  it('broadcasts loc against scale', function()
    local d = D.Normal(T.zeros({ 3, 1 }), T.ones({ 4 }))
    assert.are.same({ 3, 4 }, d.batch_shape)
  end)

  it('draws samples with its mean and variance', function()
    -- 40000 draws: the mean is within 5 standard errors; the sample variance
    -- of a normal has relative sd sqrt(2/n) = 0.7%, so 5% is 7 sd.
    T.random.seed(3)
    local d = D.Normal(T.array({ -1, 0.5, 3 }, 'float64'), T.array({ 0.5, 1, 2 }, 'float64'))
    S.moments(d:sample(40000), { -1, 0.5, 3 }, { 0.25, 1, 4 })
  end)

  it('has a KL divergence that agrees with a Monte Carlo estimate, and cross_entropy = entropy + KL', function()
    T.random.seed(4)
    local p = D.Normal(T.array({ 0, 1 }, 'float64'), T.array({ 1, 0.5 }, 'float64'))
    local q = D.Normal(T.array({ 0.5, 0 }, 'float64'), nil, { log_scale = T.array({ 0.3, -0.2 }, 'float64') })
    S.check_kl_mc(p, q, 40000)
    local h = S.values(chainer.cross_entropy(p, q))
    local want = S.values(p.entropy + chainer.kl_divergence(p, q))
    S.near(T.array(h, 'float64'), want, 1e-12)
    -- cross entropy is also E_p[-log q(x)]
    local mc = S.values(T.mean((-q:log_prob(p:sample(40000))).array, { axis = 0 }))
    for i = 1, 2 do assert(math.abs(mc[i] - h[i]) < 0.03, 'cross entropy ' .. i) end
  end)

  it('is differentiable through a KL term (a VAE-style loss)', function()
    local mu = chainer.Variable(T.array({ 0.3, -0.2 }))
    local ln_sigma = chainer.Variable(T.array({ 0.1, -0.4 }))
    local q = D.Normal(mu, nil, { log_scale = ln_sigma })
    local prior = D.Normal(T.zeros({ 2 }), T.ones({ 2 }))
    local loss = F.sum(chainer.kl_divergence(q, prior))
    loss:backward()
    S.near(mu.grad, { 0.3, -0.2 }, 1e-6)                        -- d/dmu (mu^2/2)
    S.near(ln_sigma.grad, { math.exp(0.2) - 1, math.exp(-0.8) - 1 }, 1e-5)   -- d/dl (e^2l/2 - l)
  end)

  it('rejects bad parameters and options', function()
    S.raises(function() D.Normal(T.zeros({ 2 }), T.array({ 1, -1 })) end, 'Normal', 'scale', 'positive')
    S.raises(function() D.Normal(T.zeros({ 2 }), T.array({ 1, 0 })) end, 'scale', 'positive')
    S.raises(function() D.Normal(T.array({ 0, 0 / 0 }), T.ones({ 2 })) end, 'loc', 'finite')
    S.raises(function() D.Normal(T.zeros({ 2 })) end, 'either scale or log_scale')
    S.raises(function() D.Normal(T.zeros({ 2 }), T.ones({ 2 }), { log_scale = T.zeros({ 2 }) }) end, 'not both')
    S.raises(function() D.Normal(T.zeros({ 2 }), T.ones({ 2 }), { scal = 1 }) end, "unknown option 'scal'")
    S.raises(function() D.Normal(T.zeros({ 2 }), T.ones({ 3 })) end, 'do not broadcast')
    S.raises(function() D.Normal('a', T.ones({ 2 })) end, 'loc', 'string')
    S.raises(function() D.Normal(T.zeros({ 2 }, 'int32'), T.ones({ 2 })) end, 'loc', 'float')
    S.raises(function() D.Normal(T.zeros({ 2 }), T.ones({ 2 }), { validate_args = 1 }) end, 'validate_args', 'boolean')
    S.raises(function() D.Normal(T.zeros({ 2 }), T.ones({ 2 })):sample(1.5) end, 'sample', 'integer')
    -- validate_args = false skips the value checks
    assert.are.same({ 2 }, D.Normal(T.zeros({ 2 }), T.array({ 1, -1 }), { validate_args = false }).batch_shape)
  end)

  it('is reachable as chainer.distributions and require "chainer.distributions"', function()
    assert.are.equal(require('chainer.distributions').Normal, D.Normal)
    assert.are.equal(chainer.Distribution, D.Distribution)
    assert.is_true(chainer.isinstance(D.Normal(0, 1), chainer.Distribution))
  end)
end)

-- chainer.testing.distribution_unittest on Normal, as Chainer's own
-- TestNormal does (with the reference written out instead of scipy):
-- batch shapes, densities, cdf/icdf round trips, moments of samples.
local testing = chainer.testing
local NormalUnitTest = testing.distribution_unittest:extend('NormalUnitTest')
function NormalUnitTest:setup_configure()
  local loc = U(-1, 1, self.shape, 'float64')
  local scale = U(0.5, 2, self.shape, 'float64')
  self.params = { loc = loc, scale = scale }
  self.dist = function(p)
    if self.use_log_scale then return D.Normal(p.loc, nil, { log_scale = F.log(p.scale) }) end
    return D.Normal(p.loc, p.scale)
  end
  self.reference = {
    logpdf = function(x, p) return -0.5 * ((x - p.loc) / p.scale) ^ 2 - math.log(p.scale) - LOG_SQRT_2PI end,
    pdf = function(x, p) return math.exp(-0.5 * ((x - p.loc) / p.scale) ^ 2) / (p.scale * math.sqrt(2 * math.pi)) end,
    mean = function(p) return p.loc end,
    var = function(p) return p.scale ^ 2 end,
    std = function(p) return p.scale end,
    entropy = function(p) return 0.5 * math.log(2 * math.pi * math.exp(1)) + math.log(p.scale) end,
  }
  self.test_targets = { 'batch_shape', 'cdf', 'entropy', 'event_shape', 'icdf', 'log_cdf', 'log_prob',
    'log_survival', 'mean', 'prob', 'sample', 'stddev', 'support', 'survival', 'variance' }
end
testing.parameterize(testing.product{ shape = { { 3, 2 }, {} }, is_variable = { true, false },
  use_log_scale = { false, true } })(NormalUnitTest)
