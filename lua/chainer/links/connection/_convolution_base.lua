-- links/connection/_convolution_base.lua: what ConvolutionND and
-- DeconvolutionND (and through them the 1-d, 2-d and 3-d links) share: the
-- constructor's common arguments and parameters, lazy W from the first
-- input's channels, the forward call, and the fixed-dimension variants.
-- The module gives family() (the family's class, on that shared base) and
-- fixed() (a variant); a family gives _w_shape(in_channels), _options(),
-- printable_specs() and may define _configure_family (its own arguments and
-- checks) and _check_input_channels.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local ConvolutionBase = Link:extend('ConvolutionBase')

-- Shared constructor: a = table of Chainer's arguments, ndim = spatial dims.
-- (Error levels: this method, the subclass init, Link.new, the user.)
function ConvolutionBase:_configure(fn, ndim, a)
  local in_channels, out_channels, ksize = U.conv_channels(fn, a)
  self.ndim = ndim
  self.in_channels = in_channels
  self.out_channels = out_channels
  self.ksize = U.tuple(ksize, ndim)
  self.stride = a.stride or 1
  self.pad = a.pad or 0
  self.dilate = a.dilate or 1
  self.groups = a.groups or 1
  self.nobias = a.nobias and true or false
  self:_configure_family(fn, a)
  if out_channels % self.groups ~= 0 then
    error(string.format('%s: out_channels (%d) must be divisible by groups (%d)', fn, out_channels, self.groups), 4)
  end
  self.W = U.param(U.weight_init(a.initialW, fn), in_channels and self:_w_shape(in_channels) or nil)
  if not self.nobias then
    self.b = U.param(U.bias_init(a.initial_bias, fn), { out_channels })
  end
end

-- The family's own arguments and checks (error level 5: the user).
function ConvolutionBase:_configure_family() end

-- W from x's channel count at the first forward, which calls this while W
-- is uninitialised (error level: the caller of forward for a bad x).
function ConvolutionBase:_initialize_from(x)
  local xd = U.input_data(self._function_name, x)
  if xd.ptr.nd < 2 then
    error(getmetatable(self).__name .. ': x must be a tensor or Variable of shape (N, C, ...)', 3)
  end
  local in_channels = xd.shape[2]
  self:_check_input_channels(in_channels)
  self.in_channels = in_channels
  self.W:initialize(self:_w_shape(in_channels))
end

function ConvolutionBase:_check_input_channels() end

function ConvolutionBase:forward(x)
  if self.W._data == nil then self:_initialize_from(x) end
  return self._apply(x, self.W, self.b, self:_options())
end

-- A family's class calling F[fname] (the function a bad x is reported under).
local function family(name, fname)
  local cls = ConvolutionBase:extend(name)
  cls._function_name = fname
  cls._apply = F[fname]
  return cls
end

-- A fixed-dimension variant of the family `parent`: Chainer's argument order
-- without `ndim` (signature), calling F[fname].
local function fixed(parent, name, ndim, signature, fname)
  local cls = parent:extend(name)
  cls._function_name = fname
  cls._apply = F[fname]
  local fn = 'L.' .. name
  function cls:init(...)
    local a = args.parse(fn, signature, select('#', ...), ...)
    self:_configure(name, ndim, a)
  end
  return cls
end

return { family = family, fixed = fixed }
