-- distributions/gumbel.lua: Gumbel(loc, scale); reparameterised samples
-- loc - scale * log(-log u).
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local base = require 'chainer.distributions.distribution'
local LocationScale = require 'chainer.distributions._location_scale'
local H = base.helpers

local Gumbel = LocationScale:extend('Gumbel')

local EULER = 0.57721566490153286

function Gumbel:_get__log_scale() return F.log(self.scale) end
function Gumbel:_get_mean() return self.loc + self.scale * EULER end
function Gumbel:_get_variance() return self.scale * self.scale * (math.pi * math.pi / 6) end
function Gumbel:_get_entropy() return self._log_scale + (EULER + 1) end

function Gumbel:log_prob(x)
  local z = (x - self.loc) / self.scale
  return -self._log_scale - z - F.exp(-z)
end
function Gumbel:cdf(x) return F.exp(-F.exp(-(x - self.loc) / self.scale)) end
function Gumbel:icdf(p) return self.loc - self.scale * F.log(-F.log(p)) end

function Gumbel:sample_n(n)
  local loc = self.loc.array
  -- float64 noise, with u = 0 (probability 2^-53) moved to the smallest
  -- double, so that every draw is finite
  local u = T.random.uniform(0, 1, H.sample_shape(n, loc), 'float64', loc.device)
  u = T.where(T.eq(u, 0), 4.9e-324, u)
  return self.loc - self.scale * (T.log(-T.log(u))):astype(loc.dtype)
end

base.register_kl(Gumbel, Gumbel, function(p, q)
  local r = p.scale / q.scale
  return q._log_scale - p._log_scale + (r - 1) * EULER + F.exp((q.loc - p.loc) / q.scale + F.lgamma(r + 1)) - 1
    + (p.loc - q.loc) / q.scale
end)

return Gumbel
