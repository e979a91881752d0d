-- distributions/chisquare.lua: Chisquare(k), k degrees of freedom (the
-- Gamma(k/2, 2) distribution).  Samples are not differentiable, as in Chainer.
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local base = require 'chainer.distributions.distribution'
local parametric = require 'chainer.distributions._parametric'
local samplers = require 'chainer.distributions._samplers'
local H = base.helpers

local Chisquare = parametric('Chisquare', { { 'k', H.positive } })
local LOG2 = math.log(2)

function Chisquare:_get__half_k() return self.k * 0.5 end
function Chisquare:_get_mean() return self.k end
function Chisquare:_get_variance() return self.k * 2 end
function Chisquare:_get_entropy()
  local h = self._half_k
  return h + LOG2 + F.lgamma(h) + (1 - h) * F.digamma(h)
end
function Chisquare:_get_support() return 'positive' end

function Chisquare:log_prob(x)
  local positive = T.gt(H.data(x), 0)
  local safe = H.where_const(positive, x, 1)
  local h = self._half_k
  local logp = (h - 1) * F.log(safe) - safe * 0.5 - F.lgamma(h) - h * LOG2
  return H.where_const(positive, logp, -math.huge)
end

function Chisquare:sample_n(n)
  local k = self.k.array
  return Variable(samplers.gamma(k * 0.5, H.sample_shape(n, k)) * 2)
end

return Chisquare
