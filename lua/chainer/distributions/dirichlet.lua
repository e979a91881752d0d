-- distributions/dirichlet.lua: Dirichlet(alpha), concentrations on alpha's
-- last axis (event_shape {K}).  Samples are normalised Gamma(alpha) draws
-- (not differentiable, as in Chainer).
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local base = require 'chainer.distributions.distribution'
local parametric = require 'chainer.distributions._parametric'
local samplers = require 'chainer.distributions._samplers'
local H = base.helpers

local Dirichlet = parametric('Dirichlet', { { 'alpha', H.positive } }, { event = 'the components' })

-- log B(alpha) = sum log Gamma(alpha_k) - log Gamma(sum alpha_k)
local function lbeta(alpha)
  return F.sum(F.lgamma(alpha), { axis = -1 }) - F.lgamma(F.sum(alpha, { axis = -1 }))
end

local function with_last_axis(v) return F.expand_dims(v, #v.shape) end

function Dirichlet:_get_alpha0() return F.sum(self.alpha, { axis = -1 }) end
function Dirichlet:_get_mean()
  return self.alpha / F.broadcast_to(with_last_axis(self.alpha0), self.alpha.shape)
end
function Dirichlet:_get_variance()
  local a0 = F.broadcast_to(with_last_axis(self.alpha0), self.alpha.shape)
  return self.alpha * (a0 - self.alpha) / (a0 * a0 * (a0 + 1))
end
function Dirichlet:_get_entropy()
  local k = self.alpha.shape[#self.alpha.shape]
  return lbeta(self.alpha) + (self.alpha0 - k) * F.digamma(self.alpha0)
    - F.sum((self.alpha - 1) * F.digamma(self.alpha), { axis = -1 })
end
function Dirichlet:_get_support() return '[0, 1]' end

function Dirichlet:log_prob(x)
  local terms = (self.alpha - 1) * F.log(x)
  return F.sum(terms, { axis = -1 }) - lbeta(self.alpha)
end

function Dirichlet:sample_n(n)
  local a = self.alpha.array
  local g = samplers.gamma(a:astype('float64'), H.sample_shape(n, a))
  return Variable((g / T.sum(g, { axis = -1, keepdims = true })):astype(a.dtype))
end

base.register_kl(Dirichlet, Dirichlet, function(p, q)
  local dg0 = F.broadcast_to(with_last_axis(F.digamma(p.alpha0)), p.alpha.shape)
  return -lbeta(p.alpha) + lbeta(q.alpha) + F.sum((p.alpha - q.alpha) * (F.digamma(p.alpha) - dg0), { axis = -1 })
end)

return Dirichlet
