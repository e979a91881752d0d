-- distributions/exponential.lua: Exponential(lam), rate lam; reparameterised
-- samples e / lam with e a standard exponential draw.
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local base = require 'chainer.distributions.distribution'
local parametric = require 'chainer.distributions._parametric'
local H = base.helpers

local Exponential = parametric('Exponential', { { 'lam', H.positive } })

function Exponential:_get_log_lam() return F.log(self.lam) end
function Exponential:_get_mean() return 1 / self.lam end
function Exponential:_get_variance() return 1 / (self.lam * self.lam) end
function Exponential:_get_stddev() return 1 / self.lam end
function Exponential:_get_mode() return self.lam * 0 end
function Exponential:_get_entropy() return 1 - self.log_lam end
function Exponential:_get_support() return 'positive' end

local function nonnegative(x) return T.ge(H.data(x), 0) end

function Exponential:log_prob(x)
  return H.where_const(nonnegative(x), self.log_lam - self.lam * x, -math.huge)
end
-- Below 0 the cdf is 0 (Chainer's formula would go negative there).
function Exponential:cdf(x)
  return H.where_const(nonnegative(x), -F.expm1(-self.lam * x), 0)
end
function Exponential:survival_function(x)
  return H.where_const(nonnegative(x), F.exp(-self.lam * x), 1)
end
function Exponential:log_survival_function(x)
  return H.where_const(nonnegative(x), -self.lam * x, 0)
end
function Exponential:icdf(p) return -F.log1p(-p) / self.lam end

function Exponential:sample_n(n)
  local lam = self.lam.array
  return H.standard_exponential(H.sample_shape(n, lam), lam) / self.lam
end

base.register_kl(Exponential, Exponential, function(p, q)
  return p.log_lam - q.log_lam + q.lam / p.lam - 1
end)

return Exponential
