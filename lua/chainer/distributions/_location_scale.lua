-- distributions/_location_scale.lua: the base of the real-valued
-- location-scale families (Cauchy, Gumbel, Laplace): the constructor
-- Family(loc, scale, {validate_args = ...}) with its checks and the shape and
-- parameter properties (from _parametric), and samples icdf(u) for u uniform
-- on (0, 1), reparameterised through loc and scale.  A family gives its
-- densities, moments and icdf (and may draw its samples another way).
local T = require 'chainer.tensor'
local base = require 'chainer.distributions.distribution'
local parametric = require 'chainer.distributions._parametric'
local H = base.helpers

local LocationScale = parametric('LocationScale', { { 'loc', H.finite }, { 'scale', H.positive } })

function LocationScale:_get_mode() return self.loc end
function LocationScale:_get_support() return 'real' end

function LocationScale:sample_n(n)
  local loc = self.loc.array
  return self:icdf(T.random.uniform(0, 1, H.sample_shape(n, loc), loc.dtype, loc.device))
end

return LocationScale
