-- distributions.OneHotCategorical and Dirichlet (events along the last
-- axis): densities, moments and entropies against formulas with gradients,
-- sample moments, KL against Monte Carlo, bad input.
local chainer = require 'chainer'
local D, F, T = chainer.distributions, chainer.functions, chainer.tensor
local U = T.random.uniform
local function_spec = require 'chainer.testing.function_spec'
local S = require 'distributions._support'

local function normalise(t) return t / T.sum(t, { axis = -1, keepdims = true }) end
local onehot = T.array({ { 0, 0, 1 }, { 1, 0, 0 } }, 'float64')
local point = T.array({ { 0.2, 0.3, 0.5 }, { 0.6, 0.1, 0.3 } }, 'float64')

-- p from positive weights w: p = w / sum(w), so gradients flow through a
-- valid simplex point
local function p_of(w) return w / F.broadcast_to(F.sum(w, { axis = 1, keepdims = true }), w.shape) end
local function weights(dt) return { U(0.5, 2, { 2, 3 }, dt) } end

function_spec.describe('OneHotCategorical:log_prob', {
  double_backward = true,
  fn = function(w) return D.OneHotCategorical(p_of(w)):log_prob(onehot:astype(w.dtype)) end,
  inputs = weights,
  reference = function(w) return T.sum(T.log(normalise(w)) * onehot:astype(w.dtype), { axis = 1 }) end,
})
function_spec.describe('OneHotCategorical.variance and entropy', {
  fn = function(w) local d = D.OneHotCategorical(p_of(w)); return d.variance, d.entropy end,
  inputs = weights,
  reference = function(w)
    local p = normalise(w)
    return p * (1 - p), -T.sum(p * T.log(p), { axis = 1 })
  end,
})
function_spec.describe('kl_divergence(OneHotCategorical, OneHotCategorical)', {
  double_backward = true,
  fn = function(a, b) return chainer.kl_divergence(D.OneHotCategorical(p_of(a)), D.OneHotCategorical(p_of(b))) end,
  inputs = function(dt) return { U(0.5, 2, { 2, 3 }, dt), U(0.5, 2, { 2, 3 }, dt) } end,
  reference = function(a, b)
    local p, q = normalise(a), normalise(b)
    return T.sum(p * T.log(p / q), { axis = 1 })
  end,
})

local lg, dg = T.lgamma, T.digamma
local function lbeta(a) return T.sum(lg(a), { axis = 1 }) - lg(T.sum(a, { axis = 1 })) end
local function alphas(dt) return { U(0.8, 3, { 2, 3 }, dt) } end

function_spec.describe('Dirichlet:log_prob', {
  double_backward = true,
  fn = function(a) return D.Dirichlet(a):log_prob(point:astype(a.dtype)) end,
  inputs = alphas,
  reference = function(a) return T.sum((a - 1) * T.log(point:astype(a.dtype)), { axis = 1 }) - lbeta(a) end,
})
function_spec.describe('Dirichlet.mean, variance and entropy', {
  fn = function(a) local d = D.Dirichlet(a); return d.mean, d.variance, d.entropy end,
  inputs = alphas,
  reference = function(a)
    local a0 = T.sum(a, { axis = 1, keepdims = true })
    local entropy = lbeta(a) + (a0:reshape({ 2 }) - 3) * dg(a0:reshape({ 2 })) - T.sum((a - 1) * dg(a), { axis = 1 })
    return a / a0, a * (a0 - a) / (a0 * a0 * (a0 + 1)), entropy
  end,
})
function_spec.describe('kl_divergence(Dirichlet, Dirichlet)', {
  double_backward = true,
  fn = function(a, b) return chainer.kl_divergence(D.Dirichlet(a), D.Dirichlet(b)) end,
  inputs = function(dt) return { U(0.8, 3, { 2, 3 }, dt), U(0.8, 3, { 2, 3 }, dt) } end,
  reference = function(a, b)
    local a0 = T.sum(a, { axis = 1, keepdims = true })
    return lbeta(b) - lbeta(a) + T.sum((a - b) * (dg(a) - dg(a0)), { axis = 1 })
  end,
})

describe('OneHotCategorical and Dirichlet', function()
  it('have batch and event shapes', function()
    local o = D.OneHotCategorical(point)
    assert.are.same({ 2 }, o.batch_shape)
    assert.are.same({ 3 }, o.event_shape)
    assert.are.same({ 5, 2, 3 }, o:sample(5).shape)
    local d = D.Dirichlet(T.ones({ 4, 2, 3 }))
    assert.are.same({ 4, 2 }, d.batch_shape)
    assert.are.same({ 3 }, d.event_shape)
    assert.are.same({ 6, 7, 4, 2, 3 }, d:sample({ 6, 7 }).shape)
  end)

  it('draw one-hot vectors with frequencies p and Dirichlet points with the right moments', function()
    -- 40000 draws each: means within 5 standard errors, variances within
    -- 10% (> 5 sd for these bounded variables)
    T.random.seed(17)
    local x = D.OneHotCategorical(point):sample(40000)
    for _, v in ipairs(S.values(T.sum(x.array, { axis = -1 }))) do assert(v == 1) end
    S.moments(x, S.values(point), S.values(point * (1 - point)), { rel_var = 0.1 })
    local d = D.Dirichlet(T.array({ { 1, 2, 3 }, { 0.5, 4, 0.7 } }, 'float64'))
    local y = d:sample(40000)
    for _, v in ipairs(S.values(T.sum(y.array, { axis = -1 }))) do assert(math.abs(v - 1) < 1e-12) end
    S.moments(y, S.values(d.mean), S.values(d.variance), { rel_var = 0.1 })
  end)

  it('have KLs that agree with Monte Carlo', function()
    T.random.seed(18)
    S.check_kl_mc(D.OneHotCategorical(point), D.OneHotCategorical(T.array({ { 0.3, 0.3, 0.4 }, { 0.2, 0.4, 0.4 } }, 'float64')), 40000)
    S.check_kl_mc(D.Dirichlet(T.array({ { 1, 2, 3 }, { 2, 2, 2 } }, 'float64')),
      D.Dirichlet(T.array({ { 2, 2, 1 }, { 1, 3, 1.5 } }, 'float64')), 40000)
  end)

  it('gives a one-hot log_prob that ignores zero-probability categories not chosen', function()
    local o = D.OneHotCategorical(T.array({ 0, 0.5, 0.5 }, 'float64'))
    S.near(o:log_prob(T.array({ 0, 1, 0 }, 'float64')), math.log(0.5), 1e-12)
  end)

  it('rejects bad parameters', function()
    S.raises(function() D.OneHotCategorical(T.array({ 0.5, 0.6 })) end, 'OneHotCategorical', 'sum to 1')
    S.raises(function() D.OneHotCategorical(T.array(1)) end, 'at least one axis')
    S.raises(function() D.Dirichlet(T.array({ 1, 0 })) end, 'Dirichlet', 'alpha', 'positive')
    S.raises(function() D.Dirichlet(T.array(2)) end, 'at least one axis')
    S.raises(function() D.Dirichlet(T.array({ 1, 1 }), { concentration = 1 }) end, "unknown option 'concentration'")
  end)
end)
