-- distributions/uniform.lua: Uniform{low = a, high = b} or
-- Uniform{loc = a, scale = w} (Chainer's keyword forms); Uniform(a, b) too.
-- Samples are reparameterised: low + (high - low) * u.
local F = require 'chainer.functions'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local base = require 'chainer.distributions.distribution'
local H = base.helpers

local Uniform = base.Distribution:extend('Uniform')

local SIGNATURE = args.signature({ 'low', 'high' }, { 'loc', 'scale', 'validate_args' })

function Uniform:init(...)
  local fn = 'Uniform'
  local a = args.parse_at(3, fn, SIGNATURE, select('#', ...), ...)
  local low_high = a.low ~= nil and a.high ~= nil
  local loc_scale = a.loc ~= nil and a.scale ~= nil
  if low_high == loc_scale or (low_high and (a.loc ~= nil or a.scale ~= nil))
      or (loc_scale and (a.low ~= nil or a.high ~= nil)) then
    args.fail('Uniform: give either low and high or loc and scale (not both)', 2)
  end
  if a.validate_args ~= nil and type(a.validate_args) ~= 'boolean' then
    args.fail(string.format('Uniform: validate_args must be a boolean (got %s)', type(a.validate_args)), 2)
  end
  local validate = a.validate_args ~= false
  self._use_low_high = low_high
  if low_high then
    self.low, self.high = H.broadcast(fn, { 'low', 'high' }, H.param(fn, 'low', a.low), H.param(fn, 'high', a.high))
    if validate then H.positive(fn, 'high - low', self.high - self.low) end
  else
    self.loc, self.scale = H.broadcast(fn, { 'loc', 'scale' }, H.param(fn, 'loc', a.loc), H.param(fn, 'scale', a.scale))
    if validate then H.positive(fn, 'scale', self.scale) end
  end
end

function Uniform:_get_low() return self.loc end
function Uniform:_get_high() return self.loc + self.scale end
function Uniform:_get_loc() return self.low end
function Uniform:_get_scale() return self.high - self.low end
function Uniform:_get_batch_shape() return self.low.shape end
function Uniform:_get_mean() return (self.low + self.high) * 0.5 end
function Uniform:_get_variance() return self.scale * self.scale / 12 end
function Uniform:_get_entropy() return F.log(self.scale) end
function Uniform:_get_support() return '[low, high]' end
function Uniform:_get_params()
  if self._use_low_high then return { low = self.low, high = self.high } end
  return { loc = self.loc, scale = self.scale }
end

local function inside(self, x)
  local d = H.data(x)
  return T.logical_and(T.ge(d, self.low.array), T.le(d, self.high.array))
end

function Uniform:log_prob(x)
  local mask = inside(self, x)
  local logp = -F.log(self.scale)
  if T.shape_str(logp.shape) ~= T.shape_str(mask.shape) then logp = F.broadcast_to(logp, mask.shape) end
  return H.where_const(mask, logp, -math.huge)
end

function Uniform:cdf(x) return F.clip((x - self.loc) / self.scale, 0, 1) end
function Uniform:icdf(p) return p * self.scale + self.loc end

function Uniform:sample_n(n)
  local low = self.low.array
  return self:icdf(T.random.uniform(0, 1, H.sample_shape(n, low), low.dtype, low.device))
end

-- KL(p || q) = log(width q / width p) where q covers p's support, else inf.
base.register_kl(Uniform, Uniform, function(p, q)
  local covered = T.logical_and(T.le(p.high.array, q.high.array), T.ge(p.low.array, q.low.array))
  return H.where_const(covered, F.log(q.scale) - F.log(p.scale), math.huge)
end)

return Uniform
