-- chainer.distributions: probability distributions whose densities,
-- moments, samples and KL divergences are differentiable with respect to
-- their parameters (Chainer's chainer.distributions).  Each class lives in
-- its own file and is loaded on first access.
local base = require 'chainer.distributions.distribution'

local M = {
  Distribution = base.Distribution,
  register_kl = base.register_kl,
  kl_divergence = base.kl_divergence,
  cross_entropy = base.cross_entropy,
}

local files = {
  Bernoulli = 'bernoulli',
  Beta = 'beta',
  Categorical = 'categorical',
  Cauchy = 'cauchy',
  Chisquare = 'chisquare',
  Dirichlet = 'dirichlet',
  Exponential = 'exponential',
  Gamma = 'gamma',
  Geometric = 'geometric',
  Gumbel = 'gumbel',
  Independent = 'independent',
  Laplace = 'laplace',
  LogNormal = 'log_normal',
  MultivariateNormal = 'multivariate_normal',
  Normal = 'normal',
  OneHotCategorical = 'one_hot_categorical',
  Pareto = 'pareto',
  Poisson = 'poisson',
  Uniform = 'uniform',
}
M._files = files

local modules = {}
for name, file in pairs(files) do modules[name] = 'chainer.distributions.' .. file end
return require('chainer._lazy')(M, modules)
