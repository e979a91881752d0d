-- distributions/gamma.lua: Gamma(k, theta), shape k and scale theta.
-- Samples are theta * g with g ~ Gamma(k, 1): differentiable in theta only,
-- as in Chainer.
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local base = require 'chainer.distributions.distribution'
local parametric = require 'chainer.distributions._parametric'
local samplers = require 'chainer.distributions._samplers'
local H = base.helpers

local Gamma = parametric('Gamma', { { 'k', H.positive }, { 'theta', H.positive } })

function Gamma:_get_mean() return self.k * self.theta end
function Gamma:_get_variance() return self.k * self.theta * self.theta end
function Gamma:_get_entropy()
  return self.k + F.log(self.theta) + F.lgamma(self.k) + (1 - self.k) * F.digamma(self.k)
end
function Gamma:_get_support() return 'positive' end

function Gamma:log_prob(x)
  local d = H.data(x)
  -- log x only where x > 0, so that x <= 0 gives -inf without NaN gradients
  local positive = T.gt(d, 0)
  local safe = H.where_const(positive, x, 1)
  local logp = -F.lgamma(self.k) - self.k * F.log(self.theta) + (self.k - 1) * F.log(safe) - safe / self.theta
  return H.where_const(positive, logp, -math.huge)
end

function Gamma:sample_n(n)
  local k = self.k.array
  return self.theta * samplers.gamma(k, H.sample_shape(n, k))
end

base.register_kl(Gamma, Gamma, function(p, q)
  return (p.k - q.k) * F.digamma(p.k) - (F.lgamma(p.k) - F.lgamma(q.k))
    + q.k * (F.log(q.theta) - F.log(p.theta)) + p.k * (p.theta / q.theta - 1)
end)

return Gamma
