-- distributions/laplace.lua: Laplace(loc, scale); reparameterised samples
-- loc + scale * (e1 - e2), the difference of two standard exponentials.
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local base = require 'chainer.distributions.distribution'
local LocationScale = require 'chainer.distributions._location_scale'
local H = base.helpers

local Laplace = LocationScale:extend('Laplace')

function Laplace:_get_mean() return self.loc end
function Laplace:_get_variance() return self.scale * self.scale * 2 end
function Laplace:_get_stddev() return self.scale * math.sqrt(2) end
function Laplace:_get_entropy() return F.log(self.scale * 2) + 1 end

function Laplace:log_prob(x)
  return -F.log(self.scale * 2) - F.absolute(x - self.loc) / self.scale
end

-- cdf(z) = 1/2 + sign(z) (1 - e^-|z|) / 2 for z = (x - loc) / scale
function Laplace:cdf(x)
  local z = (x - self.loc) / self.scale
  return 0.5 - F.sign(z) * F.expm1(-F.absolute(z)) * 0.5
end

function Laplace:icdf(p)
  local h = p - 0.5
  return self.loc - self.scale * F.sign(h) * F.log1p(-F.absolute(h) * 2)
end

function Laplace:sample_n(n)
  local loc = self.loc.array
  local shape = H.sample_shape(n, loc)
  local eps = H.standard_exponential(shape, loc) - H.standard_exponential(shape, loc)
  return self.loc + self.scale * eps
end

base.register_kl(Laplace, Laplace, function(p, q)
  local d = F.absolute(p.loc - q.loc)
  return F.log(q.scale) - F.log(p.scale) + d / q.scale + p.scale / q.scale * F.exp(-d / p.scale) - 1
end)

return Laplace
