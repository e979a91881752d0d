-- distributions.Uniform, Exponential and Laplace: closed forms with
-- gradients, reparameterised samples, moments, KL, bad input.
local chainer = require 'chainer'
local D, F, T = chainer.distributions, chainer.functions, chainer.tensor
local U = T.random.uniform
local function_spec = require 'chainer.testing.function_spec'
local S = require 'distributions._support'

-- Each case: a constructor from Variables, the inputs, fixed points x and
-- probabilities q, and reference formulas on tensors.
local cases = {
  {
    name = 'Uniform', make = function(a, w) return D.Uniform { low = a, high = a + w } end,
    inputs = function(dt) return { U(-1, 0, { 3 }, dt), U(1.5, 2, { 3 }, dt) } end,
    x = T.array({ 0.1, 0.3, 0.5 }, 'float64'),
    ref = {
      log_prob = function(_, w) return -T.log(w) end,
      cdf = function(a, w, x) return (x - a) / w end,
      icdf = function(a, w, q) return a + q * w end,
      mean = function(a, w) return a + w * 0.5 end,
      variance = function(_, w) return w * w / 12 end,
      stddev = function(_, w) return w / math.sqrt(12) end,
      entropy = function(_, w) return T.log(w) end,
    },
  },
  {
    name = 'Exponential', make = function(l) return D.Exponential(l) end,
    inputs = function(dt) return { U(0.5, 2, { 3 }, dt) } end,
    x = T.array({ 0.1, 0.7, 2.5 }, 'float64'),
    ref = {
      log_prob = function(l, x) return T.log(l) - l * x end,
      prob = function(l, x) return l * T.exp(-l * x) end,
      cdf = function(l, x) return 1 - T.exp(-l * x) end,
      survival_function = function(l, x) return T.exp(-l * x) end,
      log_survival_function = function(l, x) return -l * x end,
      icdf = function(l, q) return -T.log(1 - q) / l end,
      mean = function(l) return 1 / l end,
      variance = function(l) return 1 / (l * l) end,
      stddev = function(l) return 1 / l end,
      entropy = function(l) return 1 - T.log(l) end,
    },
  },
  {
    name = 'Laplace', make = function(m, b) return D.Laplace(m, b) end,
    inputs = function(dt) return { U(-1, 1, { 3 }, dt), U(0.5, 2, { 3 }, dt) } end,
    x = T.array({ -1.7, 1.9, 3.5 }, 'float64'),   -- away from loc (|x| is not smooth there)
    ref = {
      log_prob = function(m, b, x) return -T.log(b * 2) - T.abs(x - m) / b end,
      prob = function(m, b, x) return T.exp(-T.abs(x - m) / b) / (b * 2) end,
      cdf = function(m, b, x)
        local z = (x - m) / b
        return T.where(T.lt(z, 0), T.exp(z) * 0.5, 1 - T.exp(-z) * 0.5)
      end,
      icdf = function(m, b, q)
        return T.where(T.lt(q, 0.5), m + b * T.log(q * 2), m - b * T.log((1 - q) * 2))
      end,
      mean = function(m) return m end, mode = function(m) return m end,
      variance = function(_, b) return b * b * 2 end,
      stddev = function(_, b) return b * math.sqrt(2) end,
      entropy = function(_, b) return T.log(b * 2) + 1 end,
    },
  },
}

local q_fixed = T.array({ 0.1, 0.4, 0.85 }, 'float64')
for _, c in ipairs(cases) do
  local closed_forms = S.closed_form_specs({ name = c.name, make = c.make, inputs = c.inputs, x = c.x, q = q_fixed,
    refs = c.ref })
  for _, s in ipairs(closed_forms) do function_spec.describe(s[1], s[2]) end
  -- the reparameterised sample: the same seed gives the same noise, so the
  -- sample is a smooth function of the parameters (gradients by finite
  -- differences); the reference rebuilds it from the same uniform draws
  function_spec.describe(c.name .. ':sample (reparameterised)', {
    double_backward = true,
    fn = function(...) T.random.seed(21); return c.make(...):sample(5) end,
    inputs = c.inputs,
    reference = function(...)
      local a = { ... }
      T.random.seed(21)
      local function u() return T.random.uniform(0, 1, { 5, 3 }, a[1].dtype) end
      local function row(t) return t:reshape({ 1, 3 }) end
      if c.name == 'Uniform' then return row(a[1]) + row(a[2]) * u() end
      if c.name == 'Exponential' then return -T.log(1 - u()) / row(a[1]) end
      local e1 = -T.log(1 - u())
      local e2 = -T.log(1 - u())
      return row(a[1]) + row(a[2]) * (e1 - e2)
    end,
  })
end

function_spec.describe('kl_divergence(Exponential, Exponential)', {
  double_backward = true,
  fn = function(a, b) return chainer.kl_divergence(D.Exponential(a), D.Exponential(b)) end,
  inputs = function(dt) return { U(0.5, 2, { 4 }, dt), U(0.5, 2, { 4 }, dt) } end,
  reference = function(a, b) return T.log(a / b) + b / a - 1 end,
})
function_spec.describe('kl_divergence(Laplace, Laplace)', {
  double_backward = true,
  fn = function(m1, b1, m2, b2) return chainer.kl_divergence(D.Laplace(m1, b1), D.Laplace(m2, b2)) end,
  inputs = function(dt) return { U(-1, -0.5, { 4 }, dt), U(0.5, 2, { 4 }, dt), U(0.5, 1, { 4 }, dt), U(0.5, 2, { 4 }, dt) } end,
  reference = function(m1, b1, m2, b2)
    local d = T.abs(m1 - m2)
    return T.log(b2 / b1) + d / b2 + b1 / b2 * T.exp(-d / b1) - 1
  end,
})
function_spec.describe('kl_divergence(Uniform, Uniform)', {
  double_backward = true,
  fn = function(w1, w2) return chainer.kl_divergence(D.Uniform(0 * w1, w1), D.Uniform(0 * w2 - 1, w2)) end,
  inputs = function(dt) return { U(0.5, 1, { 4 }, dt), U(1.5, 2, { 4 }, dt) } end,
  reference = function(w1, w2) return T.log((w2 + 1) / w1) end,
})

describe('Uniform, Exponential and Laplace', function()
  it('draw samples with the right mean and variance', function()
    -- 40000 draws; sample-variance relative sd: uniform sqrt(0.8/n) = 0.4%,
    -- exponential sqrt(8/n) = 1.4%, Laplace sqrt(5/n) = 1.1%: 8% is > 5 sd.
    T.random.seed(9)
    local n = 40000
    S.moments(D.Uniform(T.array({ 0, -2 }, 'float64'), T.array({ 1, 4 }, 'float64')):sample(n), { 0.5, 1 }, { 1 / 12, 3 }, { rel_var = 0.08 })
    S.moments(D.Exponential(T.array({ 0.5, 3 }, 'float64')):sample(n), { 2, 1 / 3 }, { 4, 1 / 9 }, { rel_var = 0.08 })
    S.moments(D.Laplace(T.array({ 1, -1 }, 'float64'), T.array({ 0.5, 2 }, 'float64')):sample(n), { 1, -1 }, { 0.5, 8 }, { rel_var = 0.08 })
  end)

  it('have densities of -inf and cdfs clipped outside their support', function()
    local u = D.Uniform { loc = T.array({ 0 }, 'float64'), scale = T.array({ 2 }, 'float64') }
    S.near(u.high, 2, 0)
    assert.are.equal(-math.huge, S.values(u:log_prob(T.array({ 2.5 }, 'float64')))[1])
    S.near(u:cdf(T.array({ -1, 3 }, 'float64')), { 0, 1 }, 0)
    local e = D.Exponential(T.array({ 2 }, 'float64'))
    assert.are.equal(-math.huge, S.values(e:log_prob(T.array({ -0.1 }, 'float64')))[1])
    S.near(e:cdf(T.array({ -1 }, 'float64')), 0, 0)
    S.near(e.mode, 0, 0)
  end)

  it('have KLs that agree with Monte Carlo; Uniform KL is inf when q misses p\'s support', function()
    T.random.seed(10)
    S.check_kl_mc(D.Exponential(T.array({ 0.7, 2 }, 'float64')), D.Exponential(T.array({ 1.5, 1 }, 'float64')), 40000)
    S.check_kl_mc(D.Laplace(T.array({ 0, 1 }, 'float64'), T.array({ 1, 0.5 }, 'float64')),
      D.Laplace(T.array({ 0.5, -1 }, 'float64'), T.array({ 2, 1 }, 'float64')), 40000)
    local kl = S.values(chainer.kl_divergence(D.Uniform(0, 2), D.Uniform(1, 3)))
    assert.are.equal(math.huge, kl[1])
  end)

  it('reject bad parameters', function()
    S.raises(function() D.Uniform(T.array({ 1 }), T.array({ 0 })) end, 'Uniform', 'high - low', 'positive')
    S.raises(function() D.Uniform { low = 0 } end, 'either low and high or loc and scale')
    S.raises(function() D.Uniform { low = 0, high = 1, loc = 0, scale = 1 } end, 'not both')
    S.raises(function() D.Uniform { low = 0, hgh = 1 } end, "unknown option 'hgh'")
    S.raises(function() D.Exponential(T.array({ 0 })) end, 'Exponential', 'lam', 'positive')
    S.raises(function() D.Exponential() end, 'Exponential', 'lam', 'required')
    S.raises(function() D.Laplace(T.array({ 0 }), T.array({ -2 })) end, 'Laplace', 'scale', 'positive')
    S.raises(function() D.Laplace(T.zeros({ 2 }), T.ones({ 3 })) end, 'Laplace', 'do not broadcast')
    S.raises(function() return D.Uniform(0, 1).mode end, 'Uniform', 'mode', 'not defined')
  end)
end)

-- chainer.testing.distribution_unittest on Exponential and Laplace (every
-- scipy-named reference written out from the closed forms).
local testing = chainer.testing
local ExponentialUnitTest = testing.distribution_unittest:extend('ExponentialUnitTest')
function ExponentialUnitTest:setup_configure()
  self.params = { lam = U(0.5, 2, self.shape, 'float64') }
  self.dist = function(p) return D.Exponential(p.lam) end
  self.support = 'positive'
  self.reference = {
    logpdf = function(x, p) return math.log(p.lam) - p.lam * x end,
    cdf = function(x, p) return 1 - math.exp(-p.lam * x) end,
    logcdf = function(x, p) return math.log(1 - math.exp(-p.lam * x)) end,
    sf = function(x, p) return math.exp(-p.lam * x) end,
    logsf = function(x, p) return -p.lam * x end,
    ppf = function(u, p) return -math.log(1 - u) / p.lam end,
    mean = function(p) return 1 / p.lam end,
    var = function(p) return 1 / p.lam ^ 2 end,
    std = function(p) return 1 / p.lam end,
    entropy = function(p) return 1 - math.log(p.lam) end,
  }
  self.test_targets = { 'batch_shape', 'cdf', 'entropy', 'event_shape', 'icdf', 'log_cdf', 'log_prob',
    'log_survival', 'mean', 'prob', 'sample', 'stddev', 'support', 'survival', 'variance' }
end
testing.parameterize(testing.product{ shape = { { 3, 2 }, {} }, is_variable = { true, false } })(ExponentialUnitTest)

local LaplaceUnitTest = testing.distribution_unittest:extend('LaplaceUnitTest')
function LaplaceUnitTest:setup_configure()
  self.params = { loc = U(-1, 1, self.shape, 'float64'), scale = U(0.5, 2, self.shape, 'float64') }
  self.dist = function(p) return D.Laplace(p.loc, p.scale) end
  self.reference = {
    logpdf = function(x, p) return -math.log(2 * p.scale) - math.abs(x - p.loc) / p.scale end,
    cdf = function(x, p)
      local z = (x - p.loc) / p.scale
      return z < 0 and 0.5 * math.exp(z) or 1 - 0.5 * math.exp(-z)
    end,
    ppf = function(u, p)
      return u < 0.5 and p.loc + p.scale * math.log(2 * u) or p.loc - p.scale * math.log(2 * (1 - u))
    end,
    mean = function(p) return p.loc end,
    var = function(p) return 2 * p.scale ^ 2 end,
    entropy = function(p) return math.log(2 * p.scale) + 1 end,
  }
  self.test_targets = { 'batch_shape', 'cdf', 'entropy', 'icdf', 'log_prob', 'mean', 'prob', 'sample', 'stddev',
    'support', 'variance' }
end
testing.parameterize({ shape = { 3, 2 } }, { shape = { 4 } })(LaplaceUnitTest)
