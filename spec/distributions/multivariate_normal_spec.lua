-- distributions.MultivariateNormal: log_prob, entropy and KL against the
-- formulas written with the covariance's inverse and determinant (not the
-- triangular factor), gradients w.r.t. loc and scale_tril, the sample's
-- mean and covariance, bad input.
local chainer = require 'chainer'
local D, F, T = chainer.distributions, chainer.functions, chainer.tensor
local U = T.random.uniform
local function_spec = require 'chainer.testing.function_spec'
local S = require 'distributions._support'

local d, B = 3, 2
local lower = T.ge(T.arange(d):reshape({ d, 1 }), T.arange(d):reshape({ 1, d }))
-- a lower-triangular factor with a diagonal kept away from 0
local function tril_var(a) return F.where(lower, a, T.zeros(a.shape, a.dtype)) + T.eye(d, a.dtype) * 1.5 end
local function tril_ref(a) return T.where(lower, a, 0) + T.eye(d, a.dtype) * 1.5 end
local function inputs(dt) return { U(-1, 1, { B, d }, dt), U(-0.5, 0.5, { B, d, d }, dt) } end

local x_fixed = T.array({ { 0.3, -0.2, 0.9 }, { -1.1, 0.4, 0.1 } }, 'float64')

-- per batch element b: the covariance, its inverse and log-determinant
local function cov_parts(l, b)
  local cov = T.matmul(l:select(b), l:select(b):transpose())
  return cov, T.inv(cov), math.log(T.det(cov):item())
end
local function quad(v, m) return T.sum(v * T.matmul(m, v:reshape({ d, 1 })):reshape({ d })):item() end

function_spec.describe('MultivariateNormal:log_prob', {
  double_backward = true,
  fn = function(m, a) return D.MultivariateNormal(m, { scale_tril = tril_var(a) }):log_prob(x_fixed:astype(m.dtype)) end,
  inputs = inputs,
  reference = function(m, a)
    local l, out = tril_ref(a), {}
    for b = 0, B - 1 do
      local _, inv, logdet = cov_parts(l, b)
      local diff = x_fixed:astype(m.dtype):select(b) - m:select(b)
      out[b + 1] = -0.5 * quad(diff, inv) - 0.5 * logdet - d / 2 * math.log(2 * math.pi)
    end
    return T.array(out, m.dtype)
  end,
})

function_spec.describe('MultivariateNormal.entropy, covariance and variance', {
  fn = function(m, a)
    local dist = D.MultivariateNormal(m, { scale_tril = tril_var(a) })
    return dist.entropy, dist.covariance, dist.variance
  end,
  inputs = inputs,
  no_grads = { true, false },
  reference = function(m, a)
    local l, h, covs, vars = tril_ref(a), {}, {}, {}
    for b = 0, B - 1 do
      local cov, _, logdet = cov_parts(l, b)
      h[b + 1] = 0.5 * logdet + d / 2 * math.log(2 * math.pi * math.exp(1))
      covs[b + 1] = cov:totable()
      vars[b + 1] = { cov:get(0, 0), cov:get(1, 1), cov:get(2, 2) }
    end
    return T.array(h, m.dtype), T.array(covs, m.dtype), T.array(vars, m.dtype)
  end,
})

function_spec.describe('kl_divergence(MultivariateNormal, MultivariateNormal)', {
  double_backward = true,
  fn = function(m1, a1, m2, a2)
    return chainer.kl_divergence(D.MultivariateNormal(m1, { scale_tril = tril_var(a1) }),
      D.MultivariateNormal(m2, { scale_tril = tril_var(a2) }))
  end,
  inputs = function(dt) local p, q = inputs(dt), inputs(dt); return { p[1], p[2], q[1], q[2] } end,
  reference = function(m1, a1, m2, a2)
    local l1, l2, out = tril_ref(a1), tril_ref(a2), {}
    for b = 0, B - 1 do
      local cov1, _, logdet1 = cov_parts(l1, b)
      local _, inv2, logdet2 = cov_parts(l2, b)
      local tr = T.trace(T.matmul(inv2, cov1)):item()
      out[b + 1] = 0.5 * (tr + quad(m2:select(b) - m1:select(b), inv2) - d + logdet2 - logdet1)
    end
    return T.array(out, m1.dtype)
  end,
})

function_spec.describe('MultivariateNormal:sample (reparameterised)', {
  fn = function(m, a) T.random.seed(51); return D.MultivariateNormal(m, { scale_tril = tril_var(a) }):sample(4) end,
  inputs = inputs,
  reference = function(m, a)
    T.random.seed(51)
    local eps = T.random.normal(0, 1, { 4, B, d }, m.dtype)
    return m:reshape({ 1, B, d }) + T.matmul(tril_ref(a):reshape({ 1, B, d, d }), eps:reshape({ 4, B, d, 1 })):reshape({ 4, B, d })
  end,
})

describe('MultivariateNormal', function()
  local L = T.array({ { { 1, 0, 0 }, { 0.5, 2, 0 }, { -0.3, 0.4, 0.7 } } }, 'float64')
  local loc = T.array({ { 1, -2, 0.5 } }, 'float64')

  it('has batch and event shapes', function()
    local m = D.MultivariateNormal(loc, { scale_tril = L })
    assert.are.same({ 1 }, m.batch_shape)
    assert.are.same({ 3 }, m.event_shape)
    assert.are.same({ 4, 5, 1, 3 }, m:sample({ 4, 5 }).shape)
    assert.are.same({ 4, 1 }, m:log_prob(m:sample(4)).shape)
  end)

  it('draws samples with its mean and covariance', function()
    -- 40000 draws: the sample covariance entry (i, j) has sd
    -- sqrt((S_ii S_jj + S_ij^2) / n); 6 sd of it is allowed
    T.random.seed(19)
    local n = 40000
    local x = D.MultivariateNormal(loc, { scale_tril = L }):sample(n).array:reshape({ n, 3 })
    local cov = T.matmul(L:select(0), L:select(0):transpose())
    local mean = T.mean(x, { axis = 0 })
    for i = 0, 2 do
      assert(math.abs(mean:get(i) - loc:get(0, i)) < 5 * math.sqrt(cov:get(i, i) / n), 'mean ' .. i)
    end
    local c = x - mean
    local sample_cov = T.matmul(c:transpose(), c) / (n - 1)
    for i = 0, 2 do
      for j = 0, 2 do
        local sd = math.sqrt((cov:get(i, i) * cov:get(j, j) + cov:get(i, j) ^ 2) / n)
        assert(math.abs(sample_cov:get(i, j) - cov:get(i, j)) < 6 * sd, string.format('cov %d %d', i, j))
      end
    end
  end)

  it('has a KL that agrees with Monte Carlo', function()
    T.random.seed(20)
    local q = D.MultivariateNormal(T.zeros({ 1, 3 }, 'float64'), { scale_tril = T.eye(3, 'float64'):reshape({ 1, 3, 3 }) * 1.5 })
    S.check_kl_mc(D.MultivariateNormal(loc, { scale_tril = L }), q, 40000)
  end)

  it('rejects bad input', function()
    S.raises(function() D.MultivariateNormal(loc) end, 'MultivariateNormal', 'scale_tril', 'required')
    S.raises(function() D.MultivariateNormal(loc, { scale_tril = L:transpose({ 0, 2, 1 }) }) end, 'lower triangular')
    S.raises(function() D.MultivariateNormal(loc, { scale_tril = L * 0 }) end, 'nonzero diagonal')
    S.raises(function() D.MultivariateNormal(T.zeros({ 1, 2 }), { scale_tril = L }) end, '(..., d) and (..., d, d)')
    S.raises(function() D.MultivariateNormal(loc, { scale = L }) end, "unknown option 'scale'")
  end)
end)
