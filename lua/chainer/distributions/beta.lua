-- distributions/beta.lua: Beta(a, b) on [0, 1].  Samples are
-- X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b) (not differentiable, as in
-- Chainer).
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local base = require 'chainer.distributions.distribution'
local parametric = require 'chainer.distributions._parametric'
local samplers = require 'chainer.distributions._samplers'
local H = base.helpers

local Beta = parametric('Beta', { { 'a', H.positive }, { 'b', H.positive } })

local function lbeta(a, b) return F.lgamma(a) + F.lgamma(b) - F.lgamma(a + b) end

function Beta:_get__a_plus_b() return self.a + self.b end
function Beta:_get_mean() return self.a / self._a_plus_b end
function Beta:_get_variance()
  local s = self._a_plus_b
  return self.a * self.b / (s * s * (s + 1))
end
function Beta:_get_entropy()
  local s = self._a_plus_b
  return lbeta(self.a, self.b) - (self.a - 1) * F.digamma(self.a) - (self.b - 1) * F.digamma(self.b)
    + (s - 2) * F.digamma(s)
end
function Beta:_get_support() return '[0, 1]' end

function Beta:log_prob(x)
  local d = H.data(x)
  local inside = T.logical_and(T.ge(d, 0), T.le(d, 1))
  local safe = H.where_const(inside, x, 0.5)
  local logp = (self.a - 1) * F.log(safe) + (self.b - 1) * F.log1p(-safe) - lbeta(self.a, self.b)
  return H.where_const(inside, logp, -math.huge)
end

function Beta:sample_n(n)
  local a, b = self.a.array, self.b.array
  local shape = H.sample_shape(n, a)
  local x = samplers.gamma(a:astype('float64'), shape)
  local y = samplers.gamma(b:astype('float64'), shape)
  return Variable((x / (x + y)):astype(a.dtype))
end

base.register_kl(Beta, Beta, function(p, q)
  local sp, sq = p._a_plus_b, q._a_plus_b
  return -lbeta(p.a, p.b) + lbeta(q.a, q.b) + (p.a - q.a) * F.digamma(p.a) + (p.b - q.b) * F.digamma(p.b)
    + (sq - sp) * F.digamma(sp)
end)

return Beta
