-- distributions/geometric.lua: Geometric(p), the number of Bernoulli(p)
-- trials up to and including the first success (support 1, 2, ...).
-- Samples are counts in p's dtype (not differentiable, as in Chainer).
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local base = require 'chainer.distributions.distribution'
local parametric = require 'chainer.distributions._parametric'
local H = base.helpers

local Geometric = parametric('Geometric', { { 'p', H.in_unit, H.positive } })

function Geometric:_get_mean() return 1 / self.p end
function Geometric:_get_variance() return (1 - self.p) / (self.p * self.p) end
function Geometric:_get_support() return 'positive integer' end

function Geometric:log_prob(x) return (x - 1) * F.log1p(-self.p) + F.log(self.p) end

-- Inversion: 1 + floor(log(v) / log(1 - p)) with v uniform in (0, 1].
function Geometric:sample_n(n)
  local p = self.p.array
  local v = 1 - T.random.uniform(0, 1, H.sample_shape(n, p), 'float64', p.device)
  local k = T.floor(T.log(v) / T.log1p(-p:astype('float64'))) + 1
  return Variable(k:astype(p.dtype))
end

base.register_kl(Geometric, Geometric, function(p, q)
  return (1 / p.p - 1) * (F.log1p(-p.p) - F.log1p(-q.p)) + F.log(p.p) - F.log(q.p)
end)

return Geometric
