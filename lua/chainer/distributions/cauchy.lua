-- distributions/cauchy.lua: Cauchy(loc, scale); reparameterised samples
-- loc + scale * tan(pi (u - 1/2)).  Its mean and variance are undefined:
-- NaN, as in Chainer.
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local Variable = require 'chainer.variable'
local base = require 'chainer.distributions.distribution'
local H = base.helpers

local Cauchy = base.Distribution:extend('Cauchy')

local OPTIONS = args.accept { 'validate_args' }

function Cauchy:init(loc, scale, opts)
  local fn = 'Cauchy'
  local validate
  opts, validate = H.options(fn, opts, OPTIONS)
  self.loc, self.scale = H.broadcast(fn, { 'loc', 'scale' }, H.param(fn, 'loc', loc), H.param(fn, 'scale', scale))
  if validate then
    H.finite(fn, 'loc', self.loc)
    H.positive(fn, 'scale', self.scale)
  end
end

local function nan_like(v) return Variable(T.full(v.shape, 0 / 0, v.dtype)) end

function Cauchy:_get_batch_shape() return self.loc.shape end
function Cauchy:_get_mean() return nan_like(self.loc) end
function Cauchy:_get_variance() return nan_like(self.loc) end
function Cauchy:_get_mode() return self.loc end
function Cauchy:_get_entropy() return F.log(self.scale * (4 * math.pi)) end
function Cauchy:_get_params() return { loc = self.loc, scale = self.scale } end
function Cauchy:_get_support() return 'real' end

function Cauchy:log_prob(x)
  local d = x - self.loc
  return F.log(self.scale) - F.log(d * d + self.scale * self.scale) - math.log(math.pi)
end
function Cauchy:cdf(x) return F.arctan((x - self.loc) / self.scale) / math.pi + 0.5 end
function Cauchy:icdf(p) return self.loc + self.scale * F.tan((p - 0.5) * math.pi) end

function Cauchy:sample_n(n)
  local loc = self.loc.array
  return self:icdf(T.random.uniform(0, 1, H.sample_shape(n, loc), loc.dtype, loc.device))
end

return Cauchy
