-- distributions/multivariate_normal.lua: MultivariateNormal(loc,
-- {scale_tril = L}), mean loc (..., d) and covariance L L^T with L (..., d, d)
-- lower triangular; reparameterised samples loc + L eps.
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local base = require 'chainer.distributions.distribution'
local H = base.helpers

local MultivariateNormal = base.Distribution:extend('MultivariateNormal')

local OPTIONS = args.accept { 'scale_tril', 'validate_args' }
local LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
local ENTROPY_C = 0.5 * math.log(2 * math.pi * math.exp(1))

function MultivariateNormal:init(loc, opts)
  local fn = 'MultivariateNormal'
  local validate
  opts, validate = H.options(fn, opts, OPTIONS)
  if opts.scale_tril == nil then args.fail('MultivariateNormal: the option scale_tril is required', 2) end
  self.loc = H.param(fn, 'loc', loc)
  self.scale_tril = H.param(fn, 'scale_tril', opts.scale_tril)
  local ls, ss = self.loc.shape, self.scale_tril.shape
  if #ls < 1 or #ss ~= #ls + 1 or ss[#ss] ~= ls[#ls] or ss[#ss - 1] ~= ls[#ls]
      or T.shape_str(H.leading_shape(ls)) ~= T.shape_str(H.leading_shape(ss, 2)) then
    args.fail(string.format('MultivariateNormal: loc (shape %s) and scale_tril (shape %s) must be (..., d) and (..., d, d)',
      T.shape_str(ls), T.shape_str(ss)), 2)
  end
  self.d = ls[#ls]
  if validate then
    local L = self.scale_tril.array
    local above = T.lt(T.arange(self.d):reshape({ self.d, 1 }), T.arange(self.d):reshape({ 1, self.d }))
    local upper = T.where(above, L, 0)
    if T.any(T.ne(upper, 0)):item() then
      args.fail('MultivariateNormal: scale_tril must be lower triangular (it has nonzero entries above the diagonal)', 2)
    end
    H.finite(fn, 'loc', self.loc)
    if T.any(T.eq(T.sum(L * T.eye(self.d, L.dtype), { axis = -1 }), 0)):item() then
      args.fail('MultivariateNormal: scale_tril must have a nonzero diagonal (the covariance must be positive definite)', 2)
    end
  end
end

local function diagonal(m, d) return F.sum(m * T.eye(d, m.dtype), { axis = -1 }) end

function MultivariateNormal:_get__logdet_scale()
  return F.sum(F.log(F.absolute(diagonal(self.scale_tril, self.d))), { axis = -1 })
end
-- L^-1 (a general inverse: the inverse of a triangular matrix is triangular)
function MultivariateNormal:_get__scale_tril_inv()
  local flat = F.reshape(self.scale_tril, { -1, self.d, self.d })
  return F.reshape(F.batch_inv(flat), self.scale_tril.shape)
end
function MultivariateNormal:_get_batch_shape() return H.leading_shape(self.loc.shape) end
function MultivariateNormal:_get_event_shape() return { self.d } end
function MultivariateNormal:_get_mean() return self.loc end
function MultivariateNormal:_get_mode() return self.loc end
function MultivariateNormal:_get_covariance() return F.matmul(self.scale_tril, self.scale_tril, { transb = true }) end
function MultivariateNormal:_get_variance() return F.sum(self.scale_tril * self.scale_tril, { axis = -1 }) end
function MultivariateNormal:_get_entropy() return self._logdet_scale + ENTROPY_C * self.d end
function MultivariateNormal:_get_params() return { loc = self.loc, scale_tril = self.scale_tril } end
function MultivariateNormal:_get_support() return 'real' end

-- as a column: (..., d) -> (..., d, 1)
local function column(v) return F.expand_dims(v, #v.shape) end

function MultivariateNormal:log_prob(x)
  local z = F.matmul(self._scale_tril_inv, column(x - self.loc))   -- L^-1 (x - loc), broadcast over samples
  local m = F.sum(z * z, { axis = { -2, -1 } })
  return -m * 0.5 - self._logdet_scale - LOG_SQRT_2PI * self.d
end

function MultivariateNormal:sample_n(n)
  local loc = self.loc.array
  local eps = T.random.normal(0, 1, H.sample_shape(n, loc), loc.dtype, loc.device)
  local le = F.matmul(self.scale_tril, column(eps))
  return self.loc + F.reshape(le, eps.shape)
end

base.register_kl(MultivariateNormal, MultivariateNormal, function(p, q)
  local inv_q = q._scale_tril_inv
  local a = F.matmul(inv_q, p.scale_tril)
  local trace = F.sum(a * a, { axis = { -2, -1 } })
  local z = F.matmul(inv_q, column(p.loc - q.loc))
  local mahalanobis = F.sum(z * z, { axis = { -2, -1 } })
  return q._logdet_scale - p._logdet_scale + (trace + mahalanobis - p.d) * 0.5
end)

return MultivariateNormal
