-- distributions/_location_scale.lua: the base of the real-valued
-- location-scale families (Cauchy, Gumbel, Laplace): the constructor
-- Family(loc, scale, {validate_args = ...}) with its checks, the shape and
-- parameter properties, and samples icdf(u) for u uniform on (0, 1),
-- reparameterised through loc and scale.  A family gives its densities,
-- moments and icdf (and may draw its samples another way).
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local base = require 'chainer.distributions.distribution'
local H = base.helpers

local LocationScale = base.Distribution:extend('LocationScale')

local OPTIONS = args.accept { 'validate_args' }

function LocationScale:init(loc, scale, opts)
  local fn = getmetatable(self).__name
  local validate
  opts, validate = H.options(fn, opts, OPTIONS)
  self.loc, self.scale = H.broadcast(fn, { 'loc', 'scale' }, H.param(fn, 'loc', loc), H.param(fn, 'scale', scale))
  if validate then
    H.finite(fn, 'loc', self.loc)
    H.positive(fn, 'scale', self.scale)
  end
end

function LocationScale:_get_batch_shape() return self.loc.shape end
function LocationScale:_get_mode() return self.loc end
function LocationScale:_get_params() return { loc = self.loc, scale = self.scale } end
function LocationScale:_get_support() return 'real' end

function LocationScale:sample_n(n)
  local loc = self.loc.array
  return self:icdf(T.random.uniform(0, 1, H.sample_shape(n, loc), loc.dtype, loc.device))
end

return LocationScale
