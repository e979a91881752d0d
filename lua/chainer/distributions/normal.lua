-- distributions/normal.lua: Normal(loc, scale) or Normal(loc, nil,
-- {log_scale = s}); reparameterised samples loc + scale * eps.
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local base = require 'chainer.distributions.distribution'
local H = base.helpers

local Normal = base.Distribution:extend('Normal')

local LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
local ENTROPY_C = 0.5 * math.log(2 * math.pi * math.exp(1))
local OPTIONS = args.accept { 'log_scale', 'validate_args' }

function Normal:init(loc, scale, opts)
  local fn = 'Normal'
  local validate
  opts, validate = H.options(fn, opts, OPTIONS)
  if (scale == nil) == (opts.log_scale == nil) then
    args.fail('Normal: give either scale or log_scale (not both)', 2)
  end
  loc = H.param(fn, 'loc', loc)
  if scale ~= nil then
    scale = H.param(fn, 'scale', scale)
    loc, scale = H.broadcast(fn, { 'loc', 'scale' }, loc, scale)
    if validate then H.positive(fn, 'scale', scale) end
    self.scale = scale
  else
    local log_scale = H.param(fn, 'log_scale', opts.log_scale)
    loc, log_scale = H.broadcast(fn, { 'loc', 'log_scale' }, loc, log_scale)
    self.log_scale = log_scale
  end
  if validate then H.finite(fn, 'loc', loc) end
  self.loc = loc
end

function Normal:_get_scale() return F.exp(self.log_scale) end
function Normal:_get_log_scale() return F.log(self.scale) end
function Normal:_get_batch_shape() return self.loc.shape end
function Normal:_get_mean() return self.loc end
function Normal:_get_mode() return self.loc end
function Normal:_get_stddev() return self.scale end
function Normal:_get_variance() return self.scale * self.scale end
function Normal:_get_entropy() return self.log_scale + ENTROPY_C end
function Normal:_get_params() return { loc = self.loc, scale = self.scale } end
function Normal:_get_support() return 'real' end

local function standardise(self, x) return (x - self.loc) / self.scale end

function Normal:log_prob(x)
  local z = standardise(self, x)
  return -(z * z) * 0.5 - self.log_scale - LOG_SQRT_2PI
end
function Normal:cdf(x) return F.ndtr(standardise(self, x)) end
function Normal:log_cdf(x) return F.log_ndtr(standardise(self, x)) end
function Normal:survival_function(x) return F.ndtr(-standardise(self, x)) end
function Normal:log_survival_function(x) return F.log_ndtr(-standardise(self, x)) end
function Normal:icdf(p) return self.loc + self.scale * F.ndtri(p) end

function Normal:sample_n(n)
  local loc = self.loc.array
  local eps = T.random.normal(0, 1, H.sample_shape(n, loc), loc.dtype, loc.device)
  return self.loc + self.scale * eps
end

base.register_kl(Normal, Normal, function(p, q)
  local d = p.loc - q.loc
  return q.log_scale - p.log_scale + (p.variance + d * d) / q.variance * 0.5 - 0.5
end)

return Normal
