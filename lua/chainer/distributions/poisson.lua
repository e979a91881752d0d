-- distributions/poisson.lua: Poisson(lam) on 0, 1, 2, ...  Samples are
-- counts in lam's dtype (not differentiable, as in Chainer).
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local Variable = require 'chainer.variable'
local base = require 'chainer.distributions.distribution'
local parametric = require 'chainer.distributions._parametric'
local samplers = require 'chainer.distributions._samplers'
local H = base.helpers

local Poisson = parametric('Poisson', { { 'lam', H.positive } })

function Poisson:_get__log_lam() return F.log(self.lam) end
function Poisson:_get_mean() return self.lam end
function Poisson:_get_variance() return self.lam end
function Poisson:_get_support() return 'non negative integer' end

-- log p(x) = x log lam - log x! - lam, for counts x (a tensor or a Variable's data)
function Poisson:log_prob(x)
  local d = H.data(x)
  if not T.is_tensor(d) then args.fail('Poisson:log_prob: x must be a Variable or a tensor of counts', 2) end
  d = d:astype(self.lam.dtype)
  return d * self._log_lam - T.lgamma(d + 1) - self.lam
end

function Poisson:sample_n(n)
  local lam = self.lam.array
  return Variable(samplers.poisson(lam, H.sample_shape(n, lam)))
end

base.register_kl(Poisson, Poisson, function(p, q)
  return p.lam * (p._log_lam - q._log_lam) - p.lam + q.lam
end)

return Poisson
