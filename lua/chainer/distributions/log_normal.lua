-- distributions/log_normal.lua: LogNormal(mu, sigma), exp of a
-- Normal(mu, sigma); reparameterised samples exp(mu + sigma * eps).
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local base = require 'chainer.distributions.distribution'
local parametric = require 'chainer.distributions._parametric'
local H = base.helpers

local LogNormal = parametric('LogNormal', { { 'mu', H.finite }, { 'sigma', H.positive } })

local LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)

function LogNormal:_get__log_sigma() return F.log(self.sigma) end
function LogNormal:_get_mean() return F.exp(self.mu + self.sigma * self.sigma * 0.5) end
function LogNormal:_get_variance()
  local s2 = self.sigma * self.sigma
  return F.exp(self.mu * 2 + s2) * F.expm1(s2)
end
function LogNormal:_get_mode() return F.exp(self.mu - self.sigma * self.sigma) end
function LogNormal:_get_entropy() return self.mu + self._log_sigma + 0.5 + LOG_SQRT_2PI end
function LogNormal:_get_support() return 'positive' end

function LogNormal:log_prob(x)
  local d = H.data(x)
  local positive = T.gt(d, 0)
  local logx = F.log(H.where_const(positive, x, 1))
  local z = (logx - self.mu) / self.sigma
  return H.where_const(positive, -(z * z) * 0.5 - self._log_sigma - logx - LOG_SQRT_2PI, -math.huge)
end

function LogNormal:cdf(x)
  local d = H.data(x)
  local positive = T.gt(d, 0)
  local logx = F.log(H.where_const(positive, x, 1))
  return H.where_const(positive, F.ndtr((logx - self.mu) / self.sigma), 0)
end
function LogNormal:icdf(p) return F.exp(self.mu + self.sigma * F.ndtri(p)) end

function LogNormal:sample_n(n)
  local mu = self.mu.array
  local eps = T.random.normal(0, 1, H.sample_shape(n, mu), mu.dtype, mu.device)
  return F.exp(self.mu + self.sigma * eps)
end

base.register_kl(LogNormal, LogNormal, function(p, q)
  local d = p.mu - q.mu
  return (d * d + p.sigma * p.sigma) / (q.sigma * q.sigma) * 0.5 - 0.5 + q._log_sigma - p._log_sigma
end)

return LogNormal
