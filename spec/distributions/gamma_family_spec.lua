-- distributions.Gamma, Beta, LogNormal and Poisson: densities, moments and
-- entropies against textbook formulas with gradients, sample moments over
-- many draws, KL against Monte Carlo, bad input.
local chainer = require 'chainer'
local D, F, T = chainer.distributions, chainer.functions, chainer.tensor
local U = T.random.uniform
local function_spec = require 'chainer.testing.function_spec'
local S = require 'distributions._support'

local function pos(dt) return { U(0.8, 3, { 3 }, dt), U(0.5, 2, { 3 }, dt) } end
local x_pos = T.array({ 0.3, 1.2, 2.5 }, 'float64')
local x_unit = T.array({ 0.2, 0.55, 0.9 }, 'float64')
local lg, dg = T.lgamma, T.digamma
local LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)

local cases = {
  { 'Gamma', function(k, th) return D.Gamma(k, th) end, x_pos, {
    log_prob = function(k, th, x) return (k - 1) * T.log(x) - x / th - lg(k) - k * T.log(th) end,
    mean = function(k, th) return k * th end,
    variance = function(k, th) return k * th * th end,
    stddev = function(k, th) return T.sqrt(k) * th end,
    entropy = function(k, th) return k + T.log(th) + lg(k) + (1 - k) * dg(k) end,
  } },
  { 'Beta', function(a, b) return D.Beta(a, b) end, x_unit, {
    log_prob = function(a, b, x) return (a - 1) * T.log(x) + (b - 1) * T.log(1 - x) - lg(a) - lg(b) + lg(a + b) end,
    mean = function(a, b) return a / (a + b) end,
    variance = function(a, b) return a * b / ((a + b) * (a + b) * (a + b + 1)) end,
    entropy = function(a, b)
      return lg(a) + lg(b) - lg(a + b) - (a - 1) * dg(a) - (b - 1) * dg(b) + (a + b - 2) * dg(a + b)
    end,
  } },
  { 'LogNormal', function(m, s) return D.LogNormal(m - 1.5, s) end, x_pos, {
    log_prob = function(m, s, x)
      local z = (T.log(x) - (m - 1.5)) / s
      return -(z * z) * 0.5 - T.log(s * x) - LOG_SQRT_2PI
    end,
    cdf = function(m, s, x) return (T.erf((T.log(x) - (m - 1.5)) / (s * math.sqrt(2))) + 1) * 0.5 end,
    mean = function(m, s) return T.exp(m - 1.5 + s * s / 2) end,
    variance = function(m, s) return (T.exp(s * s) - 1) * T.exp((m - 1.5) * 2 + s * s) end,
    mode = function(m, s) return T.exp(m - 1.5 - s * s) end,
    entropy = function(m, s) return m - 1.5 + T.log(s) + 0.5 + LOG_SQRT_2PI end,
  }, function(dt) return { U(0.8, 3, { 3 }, dt), U(0.3, 1, { 3 }, dt) } end },
}
for _, c in ipairs(cases) do
  local closed_forms = S.closed_form_specs({ name = c[1], make = c[2], x = c[3], refs = c[4], inputs = c[5] or pos,
    -- (LogNormal:cdf's second differences are too coarse at the default step)
    coarse = c[1] == 'LogNormal' and { cdf = true } or nil })
  for _, s in ipairs(closed_forms) do function_spec.describe(s[1], s[2]) end
end

function_spec.describe('LogNormal:icdf', {
  double_backward = true,
  fn = function(m, s) return D.LogNormal(m, s):icdf(T.full({ 3 }, 0.975, m.dtype)) end,
  inputs = pos,
  reference = function(m, s) return T.exp(m + s * 1.959963984540054) end,
})

function_spec.describe('LogNormal:sample (reparameterised)', {
  double_backward = true,
  fn = function(m, s) T.random.seed(31); return D.LogNormal(m, s):sample(4) end,
  inputs = pos,
  reference = function(m, s)
    T.random.seed(31)
    return T.exp(m:reshape({ 1, 3 }) + s:reshape({ 1, 3 }) * T.random.normal(0, 1, { 4, 3 }, m.dtype))
  end,
})

function_spec.describe('Poisson:log_prob', {
  double_backward = true,
  fn = function(l) return D.Poisson(l):log_prob(T.array({ 0, 2, 7 }, 'int32')) end,
  inputs = function(dt) return { U(0.5, 5, { 3 }, dt) } end,
  reference = function(l)
    local k = T.array({ 0, 2, 7 }, l.dtype)
    return k * T.log(l) - l - T.array({ 0, math.log(2), math.log(5040) }, l.dtype)
  end,
})

local kls = {
  { 'Gamma', D.Gamma, function(k1, t1, k2, t2)
    return (k1 - k2) * dg(k1) - lg(k1) + lg(k2) + k2 * T.log(t2 / t1) + k1 * (t1 - t2) / t2 end },
  { 'Beta', D.Beta, function(a1, b1, a2, b2)
    return lg(a2) + lg(b2) - lg(a2 + b2) - lg(a1) - lg(b1) + lg(a1 + b1) + (a1 - a2) * dg(a1) + (b1 - b2) * dg(b1)
      + (a2 + b2 - a1 - b1) * dg(a1 + b1) end },
  { 'LogNormal', D.LogNormal, function(m1, s1, m2, s2)
    return T.log(s2 / s1) + (s1 * s1 + (m1 - m2) * (m1 - m2)) / (s2 * s2 * 2) - 0.5 end },
}
for _, c in ipairs(kls) do
  function_spec.describe('kl_divergence(' .. c[1] .. ', ' .. c[1] .. ')', {
  double_backward = true,
    fn = function(a1, b1, a2, b2) return chainer.kl_divergence(c[2](a1, b1), c[2](a2, b2)) end,
    inputs = function(dt) return { U(0.8, 3, { 3 }, dt), U(0.5, 2, { 3 }, dt), U(0.8, 3, { 3 }, dt), U(0.5, 2, { 3 }, dt) } end,
    reference = c[3],
  })
end
function_spec.describe('kl_divergence(Poisson, Poisson)', {
  double_backward = true,
  fn = function(a, b) return chainer.kl_divergence(D.Poisson(a), D.Poisson(b)) end,
  inputs = function(dt) return { U(0.5, 5, { 3 }, dt), U(0.5, 5, { 3 }, dt) } end,
  reference = function(a, b) return a * T.log(a / b) - a + b end,
})

describe('Gamma, Beta, LogNormal and Poisson', function()
  it('draw samples with the right mean and variance', function()
    -- 40000 draws; the mean within 5 standard errors; the variance within
    -- 10%, more than 5 sd of the sample variance for these shapes (the
    -- largest excess kurtosis here is Gamma(0.4)'s 6/k = 15: sd sqrt(17/n) = 2%;
    -- LogNormal(0, 0.5) has 5.9: sd 1.3%)
    T.random.seed(12)
    local n = 40000
    local k, th = { 0.4, 1, 4.5 }, { 2, 1, 0.5 }
    local g = D.Gamma(T.array(k, 'float64'), T.array(th, 'float64'))
    S.moments(g:sample(n), { 0.8, 1, 2.25 }, { 1.6, 1, 1.125 }, { rel_var = 0.1 })
    local b = D.Beta(T.array({ 0.5, 2, 5 }, 'float64'), T.array({ 0.5, 3, 1 }, 'float64'))
    S.moments(b:sample(n), S.values(b.mean), S.values(b.variance), { rel_var = 0.1 })
    local l = D.LogNormal(T.array({ 0, 1 }, 'float64'), T.array({ 0.5, 0.25 }, 'float64'))
    S.moments(l:sample(n), S.values(l.mean), S.values(l.variance), { rel_var = 0.1 })
    local p = D.Poisson(T.array({ 0.3, 4, 9.9, 10, 60, 500 }, 'float64'))
    local x = p:sample(n)
    for _, v in ipairs(S.values(T.abs(x.array - T.floor(x.array)))) do assert(v == 0, 'Poisson draws are integers') end
    S.moments(x, { 0.3, 4, 9.9, 10, 60, 500 }, { 0.3, 4, 9.9, 10, 60, 500 }, { rel_var = 0.1 })
  end)

  it('give Poisson probabilities that sum to 1 and match the pmf', function()
    local p = D.Poisson(T.array({ 3 }, 'float64'))
    local total = 0
    for k = 0, 60 do total = total + S.values(p:prob(T.array({ k }, 'float64')))[1] end
    assert(math.abs(total - 1) < 1e-12)
    S.near(p:prob(T.array({ 2 }, 'float64')), 4.5 * math.exp(-3), 1e-12)
  end)

  it('have densities of -inf outside the support, without NaN gradients', function()
    local k = chainer.Variable(T.array({ 2, 2 }, 'float64'))
    local g = D.Gamma(k, T.array({ 1, 1 }, 'float64'))
    local lp = g:log_prob(T.array({ -1, 1 }, 'float64'))
    assert.are.equal(-math.huge, S.values(lp)[1])
    local b = D.Beta(T.array({ 2 }, 'float64'), T.array({ 2 }, 'float64'))
    assert.are.equal(-math.huge, S.values(b:log_prob(T.array({ 1.5 }, 'float64')))[1])
    local l = D.LogNormal(T.array({ 0 }, 'float64'), T.array({ 1 }, 'float64'))
    assert.are.equal(-math.huge, S.values(l:log_prob(T.array({ -2 }, 'float64')))[1])
    S.near(l:cdf(T.array({ -2 }, 'float64')), 0, 0)
    F.sum(F.where(T.array({ false, true }), lp, T.zeros({ 2 }, 'float64'))):backward()
    for _, v in ipairs(S.values(k.grad)) do assert(v == v, 'gradient is not NaN') end
  end)

  it('have KLs that agree with Monte Carlo estimates', function()
    T.random.seed(13)
    S.check_kl_mc(D.Gamma(T.array({ 2, 0.7 }, 'float64'), T.array({ 1, 2 }, 'float64')),
      D.Gamma(T.array({ 1.5, 1 }, 'float64'), T.array({ 2, 1 }, 'float64')), 40000)
    S.check_kl_mc(D.Beta(T.array({ 2, 0.7 }, 'float64'), T.array({ 3, 2 }, 'float64')),
      D.Beta(T.array({ 1.5, 1 }, 'float64'), T.array({ 2, 1 }, 'float64')), 40000)
    S.check_kl_mc(D.LogNormal(T.array({ 0, 1 }, 'float64'), T.array({ 0.5, 1 }, 'float64')),
      D.LogNormal(T.array({ 0.5, 0 }, 'float64'), T.array({ 1, 2 }, 'float64')), 40000)
    S.check_kl_mc(D.Poisson(T.array({ 2, 15 }, 'float64')), D.Poisson(T.array({ 3, 12 }, 'float64')), 40000)
  end)

  it('reject bad parameters', function()
    S.raises(function() D.Gamma(T.array({ 0 }), T.array({ 1 })) end, 'Gamma', 'k', 'positive')
    S.raises(function() D.Gamma(T.array({ 1 }), T.array({ -1 })) end, 'Gamma', 'theta', 'positive')
    S.raises(function() D.Beta(T.array({ 1 }), T.array({ 0 })) end, 'Beta', 'b', 'positive')
    S.raises(function() D.LogNormal(T.array({ 0 }), T.array({ 0 })) end, 'LogNormal', 'sigma', 'positive')
    S.raises(function() D.Poisson(T.array({ -3 })) end, 'Poisson', 'lam', 'positive')
    S.raises(function() D.Poisson(T.array({ 3 }), { lambda = 1 }) end, "unknown option 'lambda'")
    S.raises(function() D.Gamma(T.ones({ 2 }), T.ones({ 3 })) end, 'Gamma', 'do not broadcast')
  end)
end)

-- chainer.testing.distribution_unittest on Poisson: a discrete
-- distribution (logpmf, points drawn on 0, 1, 2, ...).
local testing = chainer.testing
local PoissonUnitTest = testing.distribution_unittest:extend('PoissonUnitTest')
local function log_factorial(k)
  local s = 0
  for i = 2, k do s = s + math.log(i) end
  return s
end
function PoissonUnitTest:setup_configure()
  self.params = { lam = U(0.5, 4, self.shape, 'float64') }
  self.dist = function(p) return D.Poisson(p.lam) end
  self.continuous = false
  self.support = 'non negative integer'
  self.reference = {
    logpmf = function(k, p) return k * math.log(p.lam) - p.lam - log_factorial(k) end,
    pmf = function(k, p) return math.exp(k * math.log(p.lam) - p.lam - log_factorial(k)) end,
    mean = function(p) return p.lam end,
    var = function(p) return p.lam end,
  }
  self.test_targets = { 'batch_shape', 'event_shape', 'log_prob', 'mean', 'prob', 'sample', 'support', 'variance' }
end
function PoissonUnitTest:sample_for_test()
  local shape = {}
  for _, s in ipairs({ self.sample_shape, self.shape }) do for _, d in ipairs(s) do shape[#shape + 1] = d end end
  return T.floor(U(0, 8, shape, 'float64'))
end
testing.parameterize({ shape = { 3, 2 } }, { shape = {} })(PoissonUnitTest)
