-- distributions/pareto.lua: Pareto(scale, alpha) on [scale, inf);
-- reparameterised samples scale * exp(e / alpha), e standard exponential
-- (differentiable in both parameters; Chainer's only in scale).
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local base = require 'chainer.distributions.distribution'
local parametric = require 'chainer.distributions._parametric'
local H = base.helpers

local Pareto = parametric('Pareto', { { 'scale', H.positive }, { 'alpha', H.positive } })

function Pareto:_get__log_scale() return F.log(self.scale) end
function Pareto:_get__log_alpha() return F.log(self.alpha) end
-- infinite where the moment does not exist (alpha <= 1, alpha <= 2)
function Pareto:_get_mean()
  local above = T.gt(self.alpha.array, 1)
  local a = H.where_const(above, self.alpha, 2)
  return H.where_const(above, a * self.scale / (a - 1), math.huge)
end
function Pareto:_get_variance()
  local above = T.gt(self.alpha.array, 2)
  local a = H.where_const(above, self.alpha, 3)
  return H.where_const(above, self.scale * self.scale * a / ((a - 1) * (a - 1) * (a - 2)), math.huge)
end
function Pareto:_get_mode() return self.scale end
function Pareto:_get_entropy() return self._log_scale - self._log_alpha + 1 / self.alpha + 1 end
function Pareto:_get_support() return '[scale, inf]' end

function Pareto:log_prob(x)
  local inside = T.ge(H.data(x), self.scale.array)
  local safe = F.where(inside, x * 1, self.scale)
  local logp = self._log_alpha + self.alpha * self._log_scale - (self.alpha + 1) * F.log(safe)
  return H.where_const(inside, logp, -math.huge)
end
function Pareto:cdf(x)
  local inside = T.ge(H.data(x), self.scale.array)
  local safe = F.where(inside, x * 1, self.scale)
  return H.where_const(inside, 1 - F.exp(self.alpha * (self._log_scale - F.log(safe))), 0)
end
function Pareto:icdf(p) return self.scale * F.exp(-F.log1p(-p) / self.alpha) end

function Pareto:sample_n(n)
  local s = self.scale.array
  return self.scale * F.exp(H.standard_exponential(H.sample_shape(n, s), s) / self.alpha)
end

base.register_kl(Pareto, Pareto, function(p, q)
  local kl = q.alpha * (p._log_scale - q._log_scale) + p._log_alpha - q._log_alpha + (q.alpha - p.alpha) / p.alpha
  return H.where_const(T.ge(p.scale.array, q.scale.array), kl, math.huge)
end)

return Pareto
