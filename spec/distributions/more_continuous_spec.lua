-- distributions.Cauchy, Chisquare, Geometric, Gumbel and Pareto: closed
-- forms with gradients, sample moments (or quantiles, for Cauchy), KL
-- against Monte Carlo, bad input.
local chainer = require 'chainer'
local D, F, T = chainer.distributions, chainer.functions, chainer.tensor
local U = T.random.uniform
local function_spec = require 'chainer.testing.function_spec'
local S = require 'distributions._support'

local EULER = 0.57721566490153286
local x_real = T.array({ -0.8, 0.4, 2.2 }, 'float64')
local x_pos = T.array({ 0.6, 1.5, 3.0 }, 'float64')
local x_big = T.array({ 2.5, 3.2, 4.5 }, 'float64')   -- above every Pareto scale below
local q_fixed = T.array({ 0.1, 0.4, 0.85 }, 'float64')
local function real2(dt) return { U(-1, 1, { 3 }, dt), U(0.5, 2, { 3 }, dt) } end

local cases = {
  { 'Cauchy', function(m, s) return D.Cauchy(m, s) end, real2, x_real, {
    log_prob = function(m, s, x) return -T.log(((x - m) / s) * ((x - m) / s) + 1) - T.log(s) - math.log(math.pi) end,
    cdf = function(m, s, x) return T.arctan((x - m) / s) / math.pi + 0.5 end,
    icdf = function(m, s, q) return m + s * T.tan((q - 0.5) * math.pi) end,
    entropy = function(_, s) return T.log(s * 4 * math.pi) end,
    mode = function(m) return m end,
  } },
  { 'Chisquare', function(k) return D.Chisquare(k) end, function(dt) return { U(1.5, 5, { 3 }, dt) } end, x_pos, {
    log_prob = function(k, x) return (k / 2 - 1) * T.log(x) - x / 2 - T.lgamma(k / 2) - k / 2 * math.log(2) end,
    mean = function(k) return k end, variance = function(k) return k * 2 end,
    entropy = function(k) return k / 2 + math.log(2) + T.lgamma(k / 2) + (1 - k / 2) * T.digamma(k / 2) end,
  } },
  { 'Geometric', function(p) return D.Geometric(p) end, function(dt) return { U(0.35, 0.65, { 3 }, dt) } end,
    T.array({ 1, 2, 5 }, 'float64'), {
    log_prob = function(p, x) return T.log(p) + (x - 1) * T.log(1 - p) end,
    mean = function(p) return 1 / p end, variance = function(p) return (1 - p) / (p * p) end,
  } },
  { 'Gumbel', function(m, s) return D.Gumbel(m, s) end, real2, x_real, {
    log_prob = function(m, s, x) local z = (x - m) / s; return -T.log(s) - z - T.exp(-z) end,
    cdf = function(m, s, x) return T.exp(-T.exp(-(x - m) / s)) end,
    icdf = function(m, s, q) return m - s * T.log(-T.log(q)) end,
    mean = function(m, s) return m + s * EULER end, mode = function(m) return m end,
    variance = function(_, s) return s * s * math.pi * math.pi / 6 end,
    entropy = function(_, s) return T.log(s) + EULER + 1 end,
  } },
  { 'Pareto', function(s, a) return D.Pareto(s, a) end, function(dt) return { U(0.5, 2, { 3 }, dt), U(2.5, 4, { 3 }, dt) } end, x_big, {
    log_prob = function(s, a, x) return T.log(a) + a * T.log(s) - (a + 1) * T.log(x) end,
    cdf = function(s, a, x) return 1 - T.pow(s / x, a) end,
    icdf = function(s, a, q) return s / T.pow(1 - q, 1 / a) end,
    mean = function(s, a) return a * s / (a - 1) end,
    variance = function(s, a) return s * s * a / ((a - 1) * (a - 1) * (a - 2)) end,
    entropy = function(s, a) return T.log(s / a) + 1 / a + 1 end,
    mode = function(s) return s end,
  } },
}
for _, c in ipairs(cases) do
  local closed_forms = S.closed_form_specs({ name = c[1], make = c[2], inputs = c[3], x = c[4], q = q_fixed, refs = c[5],
    -- (Gumbel:log_prob's second differences are too coarse at the default step)
    coarse = c[1] == 'Gumbel' and { log_prob = true } or nil,
    eps = c[1] == 'Geometric' and 1e-4 or nil })   -- 1/p^2 curves too fast for the default step
  for _, s in ipairs(closed_forms) do function_spec.describe(s[1], s[2]) end
end

function_spec.describe('Pareto:sample (reparameterised)', {
  double_backward = true,
  fn = function(s, a) T.random.seed(41); return D.Pareto(s, a):sample(4) end,
  inputs = function(dt) return { U(0.5, 2, { 3 }, dt), U(2.5, 4, { 3 }, dt) } end,
  reference = function(s, a)
    T.random.seed(41)
    local e = -T.log(1 - T.random.uniform(0, 1, { 4, 3 }, s.dtype))
    return s:reshape({ 1, 3 }) * T.exp(e / a:reshape({ 1, 3 }))
  end,
})

local kls = {
  { 'Geometric', function(dt) return { U(0.35, 0.65, { 3 }, dt), U(0.35, 0.65, { 3 }, dt) } end,
    function(a, b) return chainer.kl_divergence(D.Geometric(a), D.Geometric(b)) end,
    function(p, q) return (1 - p) / p * T.log((1 - p) / (1 - q)) + T.log(p / q) end },
  { 'Gumbel', function(dt) return { U(-1, 1, { 3 }, dt), U(0.5, 2, { 3 }, dt), U(-1, 1, { 3 }, dt), U(0.5, 2, { 3 }, dt) } end,
    function(m1, s1, m2, s2) return chainer.kl_divergence(D.Gumbel(m1, s1), D.Gumbel(m2, s2)) end,
    function(m1, s1, m2, s2)
      return T.log(s2 / s1) + EULER * (s1 / s2 - 1) + T.exp((m2 - m1) / s2) * T.exp(T.lgamma(s1 / s2 + 1)) - 1 + (m1 - m2) / s2
    end },
  { 'Pareto', function(dt) return { U(1.5, 2, { 3 }, dt), U(1, 3, { 3 }, dt), U(0.5, 1, { 3 }, dt), U(1, 3, { 3 }, dt) } end,
    function(s1, a1, s2, a2) return chainer.kl_divergence(D.Pareto(s1, a1), D.Pareto(s2, a2)) end,
    function(s1, a1, s2, a2) return a2 * T.log(s1 / s2) + T.log(a1 / a2) + a2 / a1 - 1 end },
}
for _, c in ipairs(kls) do
  function_spec.describe('kl_divergence(' .. c[1] .. ', ' .. c[1] .. ')', { double_backward = true, inputs = c[2], fn = c[3], reference = c[4],
    eps = c[1] == 'Geometric' and 1e-4 or nil })
end

describe('Cauchy, Chisquare, Geometric, Gumbel and Pareto', function()
  it('draw samples with the right moments', function()
    -- 40000 draws; 10% on the variance is > 4 sd of the sample variance for
    -- each (the largest excess kurtosis here: Geometric(0.2) 6.2, Chisquare(3) 4, Gumbel 2.4)
    T.random.seed(14)
    local n = 40000
    local k = D.Chisquare(T.array({ 3, 8 }, 'float64'))
    S.moments(k:sample(n), { 3, 8 }, { 6, 16 }, { rel_var = 0.1 })
    local g = D.Geometric(T.array({ 0.2, 0.7, 1 }, 'float64'))
    local x = g:sample(n)
    for _, v in ipairs(S.values(T.min(x.array))) do assert(v >= 1) end
    S.moments(x, { 5, 1 / 0.7, 1 }, { 20, 0.3 / 0.49, 0 }, { rel_var = 0.1 })
    local u = D.Gumbel(T.array({ 0, 2 }, 'float64'), T.array({ 1, 0.5 }, 'float64'))
    S.moments(u:sample(n), S.values(u.mean), S.values(u.variance), { rel_var = 0.1 })
    -- Pareto with alpha = 6: kurtosis finite (alpha > 4)
    local p = D.Pareto(T.array({ 1, 2 }, 'float64'), T.array({ 6, 7 }, 'float64'))
    S.moments(p:sample(n), S.values(p.mean), S.values(p.variance), { rel_var = 0.15 })
  end)

  it('draws Cauchy samples with the right quartiles', function()
    -- the fraction below a quartile of n = 40000 draws has sd sqrt(3/16/n) = 0.2%
    T.random.seed(15)
    local c = D.Cauchy(T.array({ 1 }, 'float64'), T.array({ 2 }, 'float64'))
    local x = c:sample(40000).array
    for _, q in ipairs({ { -1, 0.25 }, { 1, 0.5 }, { 3, 0.75 } }) do
      local frac = T.mean(T.lt(x, q[1]):astype('float64')):item()
      assert(math.abs(frac - q[2]) < 0.01, string.format('P(X < %g) = %g', q[1], frac))
    end
    for _, v in ipairs(S.values(c.mean)) do assert(v ~= v, 'Cauchy mean is NaN') end
  end)

  it('have KLs that agree with Monte Carlo', function()
    T.random.seed(16)
    S.check_kl_mc(D.Geometric(T.array({ 0.3, 0.6 }, 'float64')), D.Geometric(T.array({ 0.5, 0.2 }, 'float64')), 40000)
    S.check_kl_mc(D.Gumbel(T.array({ 0, 1 }, 'float64'), T.array({ 1, 0.5 }, 'float64')),
      D.Gumbel(T.array({ 0.5, 0 }, 'float64'), T.array({ 1.5, 1 }, 'float64')), 40000)
    S.check_kl_mc(D.Pareto(T.array({ 1, 2 }, 'float64'), T.array({ 3, 4 }, 'float64')),
      D.Pareto(T.array({ 0.5, 1 }, 'float64'), T.array({ 2, 5 }, 'float64')), 40000)
    -- q's support misses part of p's: inf
    S.near(chainer.kl_divergence(D.Pareto(1, 2), D.Pareto(2, 2)), math.huge, 0)
  end)

  it('give Pareto infinite moments where they do not exist and -inf below the scale', function()
    local p = D.Pareto(T.array({ 1, 1 }, 'float64'), T.array({ 0.5, 1.5 }, 'float64'))
    assert.are.same({ math.huge, 3 }, S.values(p.mean))
    assert.are.same({ math.huge, math.huge }, S.values(p.variance))
    assert.are.equal(-math.huge, S.values(p:log_prob(T.array({ 0.5, 2 }, 'float64')))[1])
    S.near(p:cdf(T.array({ 0.5, 1 }, 'float64')), { 0, 0 }, 0)
  end)

  it('reject bad parameters', function()
    S.raises(function() D.Cauchy(T.array({ 0 }), T.array({ 0 })) end, 'Cauchy', 'scale', 'positive')
    S.raises(function() D.Chisquare(T.array({ -1 })) end, 'Chisquare', 'k', 'positive')
    S.raises(function() D.Geometric(T.array({ 0 })) end, 'Geometric', 'p', 'positive')
    S.raises(function() D.Geometric(T.array({ 1.5 })) end, 'Geometric', 'p', '[0, 1]')
    S.raises(function() D.Gumbel(T.array({ 0 }), T.array({ -1 })) end, 'Gumbel', 'scale', 'positive')
    S.raises(function() D.Pareto(T.array({ 1 }), T.array({ 0 })) end, 'Pareto', 'alpha', 'positive')
    S.raises(function() D.Pareto(T.array({ 1 }), T.array({ 1 }), { alfa = 1 }) end, "unknown option 'alfa'")
  end)
end)
