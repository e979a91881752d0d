-- chainer.Distribution, register_kl, kl_divergence and cross_entropy: the
-- base class's defaults, a user-defined distribution, registry errors.
local chainer = require 'chainer'
local D, F, T = chainer.distributions, chainer.functions, chainer.tensor
local S = require 'distributions._support'

-- A point mass at c (a user's own distribution on the base class).
local PointMass = chainer.Distribution:extend('PointMass')
function PointMass:init(c) self.c = chainer.as_variable(c) end
function PointMass:_get_batch_shape() return self.c.shape end
function PointMass:_get_mean() return self.c end
function PointMass:_get_variance() return self.c * 0 end
function PointMass:_get_entropy() return self.c * 0 end
function PointMass:log_prob(x) return F.log(T.eq(x, self.c.array):astype(self.c.dtype)) end
function PointMass:sample_n(n) return F.broadcast_to(self.c, { n, unpack(self.c.shape) }) end

describe('chainer.Distribution', function()
  it('gives a subclass sample, prob, stddev, perplexity and cached fields', function()
    local d = PointMass(T.array({ 1, 2 }, 'float64'))
    assert.are.same({ 3, 4, 2 }, d:sample({ 3, 4 }).shape)
    assert.are.same({ 2 }, d:sample().shape)
    S.near(d:prob(T.array({ 1, 5 }, 'float64')), { 1, 0 }, 0)
    S.near(d.stddev, 0, 0)
    S.near(d:perplexity(T.array({ 1, 2 }, 'float64')), 1, 0)
    assert.are.equal(d.mean, d.mean)
    assert.are.equal('PointMass(batch_shape=(2,), event_shape=())', tostring(d))
  end)

  it('names what a distribution does not define', function()
    local d = PointMass(T.array({ 1 }))
    S.raises(function() return d.mode end, 'PointMass', 'mode', 'not defined')
    S.raises(function() return d:cdf(T.array({ 1 })) end, 'PointMass', 'cdf', 'not defined')
    S.raises(function() return d:icdf(T.array({ 1 })) end, 'PointMass', 'icdf', 'not defined')
    S.raises(function() return D.Normal(0, 1).covariance end, 'Normal', 'covariance', 'not defined')
  end)

  it('checks the point given to log_prob, prob, cdf, ... and the colon', function()
    local d = D.Normal(0, 1)
    S.raises(function() d:log_prob('a') end, 'Normal:log_prob', 'x must be a Variable, a tensor or a number', 'string')
    S.raises(function() d:cdf({ 1, 2 }) end, 'Normal:cdf', 'x must be', 'table')
    S.raises(function() d:icdf() end, 'Normal:icdf', 'nil')
    S.raises(function() d.log_prob(T.zeros({ 1 })) end, "call it with ':'")
    S.near(d:log_prob(0), -0.5 * math.log(2 * math.pi), 1e-6)
  end)

  it('takes a Lua number as the point, in the parameters\' dtype', function()
    local f64 = function(v) return T.array({ v }, 'float64') end
    local cases = {
      { D.Gamma(f64(2), f64(1)), math.exp(-1) },         -- x e^-x
      { D.Beta(f64(2), f64(2)), 0 },                     -- 6 x (1 - x) at the edge
      { D.LogNormal(f64(0), f64(1)), 1 / math.sqrt(2 * math.pi) },
      { D.Chisquare(f64(2)), 0.5 * math.exp(-0.5) },
      { D.Pareto(f64(1), f64(2)), 2 },
      { D.Normal(f64(0), f64(1)), math.exp(-0.5) / math.sqrt(2 * math.pi) },
    }
    for _, c in ipairs(cases) do
      local p = c[1]:prob(1)
      assert.are.equal('float64', p.dtype)
      S.near(p, c[2], 1e-12)
    end
    S.near(D.Gamma(2, 1):prob(1), math.exp(-1), 1e-6)
  end)

  it('derives the survival functions and log cdf from the cdf', function()
    local e = D.Exponential(T.array({ 2 }, 'float64'))
    S.near(e:log_cdf(T.array({ 0.5 }, 'float64')), math.log(1 - math.exp(-1)), 1e-12)
    local u = D.Uniform(T.array({ 0 }, 'float64'), T.array({ 4 }, 'float64'))
    S.near(u:survival_function(T.array({ 1 }, 'float64')), 0.75, 1e-12)
    S.near(u:log_survival_function(T.array({ 1 }, 'float64')), math.log(0.75), 1e-12)
  end)
end)

describe('register_kl and kl_divergence', function()
  it('uses a registered function (both call forms) and cross_entropy adds the entropy', function()
    chainer.register_kl(PointMass, D.Normal)(function(p, q) return -q:log_prob(p.c) end)
    local p, q = PointMass(T.array({ 0 }, 'float64')), D.Normal(T.array({ 0 }, 'float64'), T.array({ 1 }, 'float64'))
    S.near(chainer.kl_divergence(p, q), 0.5 * math.log(2 * math.pi), 1e-12)
    S.near(chainer.cross_entropy(p, q), 0.5 * math.log(2 * math.pi), 1e-12)
    chainer.register_kl(PointMass, PointMass, function(a, b) return F.absolute(a.c - b.c) end)
    S.near(chainer.kl_divergence(p, PointMass(T.array({ 3 }, 'float64'))), 3, 0)
    assert.are.equal(chainer.kl_divergence, D.kl_divergence)
  end)

  it('rejects unregistered pairs and bad arguments', function()
    S.raises(function() chainer.kl_divergence(D.Normal(0, 1), D.Laplace(0, 1)) end,
      'kl_divergence', 'no KL divergence', 'Normal', 'Laplace')
    S.raises(function() chainer.kl_divergence(D.Normal(0, 1), T.zeros({ 1 })) end, 'argument 2', 'Distribution')
    S.raises(function() chainer.register_kl(D.Normal, 'x') end, 'register_kl', 'Dist2', 'Distribution class')
    S.raises(function() chainer.register_kl(D.Normal, D.Normal, 3) end, 'register_kl', 'function')
  end)
end)

describe('chainer.distributions', function()
  it("has every one of Chainer 7.8.1's 19 classes, each a Distribution subclass", function()
    local names = { 'Bernoulli', 'Beta', 'Categorical', 'Cauchy', 'Chisquare', 'Dirichlet', 'Exponential', 'Gamma',
      'Geometric', 'Gumbel', 'Independent', 'Laplace', 'LogNormal', 'MultivariateNormal', 'Normal',
      'OneHotCategorical', 'Pareto', 'Poisson', 'Uniform' }
    for _, name in ipairs(names) do
      local cls = D[name]
      assert(cls ~= nil, name .. ' is missing')
      assert.is_true(chainer.class.issubclass(cls, chainer.Distribution), name)
      assert.are.equal(name, rawget(cls, '__name'))
    end
    assert.is_nil(D.Nonexistent)
  end)
end)
