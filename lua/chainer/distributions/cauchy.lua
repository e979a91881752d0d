-- distributions/cauchy.lua: Cauchy(loc, scale); reparameterised samples
-- loc + scale * tan(pi (u - 1/2)) (the base's icdf sampling).  Its mean
-- and variance are undefined: NaN, as in Chainer.
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local Variable = require 'chainer.variable'
local LocationScale = require 'chainer.distributions._location_scale'

local Cauchy = LocationScale:extend('Cauchy')

local function nan_like(v) return Variable(T.full(v.shape, 0 / 0, v.dtype)) end

function Cauchy:_get_mean() return nan_like(self.loc) end
function Cauchy:_get_variance() return nan_like(self.loc) end
function Cauchy:_get_entropy() return F.log(self.scale * (4 * math.pi)) end

function Cauchy:log_prob(x)
  local d = x - self.loc
  return F.log(self.scale) - F.log(d * d + self.scale * self.scale) - math.log(math.pi)
end
function Cauchy:cdf(x) return F.arctan((x - self.loc) / self.scale) / math.pi + 0.5 end
function Cauchy:icdf(p) return self.loc + self.scale * F.tan((p - 0.5) * math.pi) end

return Cauchy
