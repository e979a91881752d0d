-- links/connection/deconvolution_nd.lua: DeconvolutionND and its fixed-dimension
-- variants Deconvolution1D and Deconvolution3D (as Chainer's deconvolution_nd.py;
-- Deconvolution2D is in deconvolution_2d.lua, built the same way).
--
-- L.DeconvolutionND(ndim, in_channels, out_channels, ksize, stride, pad, nobias,
--   outsize, initialW, initial_bias, dilate, groups)
-- L.Deconvolution1D/3D(in_channels, out_channels, ksize, ...) the same without ndim.
-- W: (in_channels, out_channels/groups, k...), default LeCunNormal; b zeros.
-- in_channels = nil (or the (out_channels, ksize) form) infers it at the first call.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local DeconvolutionND = Link:extend('DeconvolutionND')
DeconvolutionND._function_name = 'deconvolution_nd'   -- the function a bad x is reported under

-- Shared constructor (error levels: this method, the subclass init, Link.new, the user).
function DeconvolutionND:_configure(fn, ndim, a)
  local in_channels, out_channels, ksize = U.conv_channels(fn, a)
  self.ndim = ndim
  self.in_channels = in_channels
  self.out_channels = out_channels
  self.ksize = U.tuple(ksize, ndim)
  self.stride = a.stride or 1
  self.pad = a.pad or 0
  self.outsize = a.outsize
  self.dilate = a.dilate or 1
  self.groups = a.groups or 1
  self.nobias = a.nobias and true or false
  if out_channels % self.groups ~= 0 then
    error(string.format('%s: out_channels (%d) must be divisible by groups (%d)', fn, out_channels, self.groups), 4)
  end
  self.W = U.param(U.weight_init(a.initialW, fn), in_channels and self:_w_shape(in_channels) or nil)
  if not self.nobias then
    self.b = U.param(U.bias_init(a.initial_bias, fn), { out_channels })
  end
end

function DeconvolutionND:_w_shape(in_channels)
  local s = { in_channels, self.out_channels / self.groups }
  for i = 1, self.ndim do s[#s + 1] = self.ksize[i] end
  return s
end

function DeconvolutionND:printable_specs()
  return { { 'in_channels', self.in_channels }, { 'out_channels', self.out_channels }, { 'ksize', self.ksize },
    { 'stride', self.stride }, { 'pad', self.pad }, { 'nobias', self.nobias }, { 'outsize', self.outsize },
    { 'dilate', self.dilate }, { 'groups', self.groups } }
end

function DeconvolutionND:_options()
  return { stride = self.stride, pad = self.pad, outsize = self.outsize, dilate = self.dilate, groups = self.groups }
end

-- W from x's channel count at the first forward, which calls this while W
-- is uninitialised (error level: the caller of forward).
function DeconvolutionND:_initialize_from(x)
  local xd = U.input_data(self._function_name, x)
  if xd.ptr.nd < 2 then
    error(getmetatable(self).__name .. ': x must be a tensor or Variable of shape (N, C, ...)', 3)
  end
  self.in_channels = xd.shape[2]
  self.W:initialize(self:_w_shape(xd.shape[2]))
end

local ND_SIGNATURE = args.signature { 'ndim', 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'nobias',
  'outsize', 'initialW', 'initial_bias', 'dilate', 'groups' }

function DeconvolutionND:init(...)
  local a = args.parse('L.DeconvolutionND', ND_SIGNATURE, select('#', ...), ...)
  if type(a.ndim) ~= 'number' then error('DeconvolutionND: ndim must be a number', 3) end
  self:_configure('DeconvolutionND', a.ndim, a)
end

function DeconvolutionND:forward(x)
  if self.W._data == nil then self:_initialize_from(x) end
  return F.deconvolution_nd(x, self.W, self.b, self:_options())
end

-- The arguments of the fixed-dimension variants: Chainer's order without `ndim`.
DeconvolutionND._FIXED_SIGNATURE = args.signature { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad',
  'nobias', 'outsize', 'initialW', 'initial_bias', 'dilate', 'groups' }

-- A fixed-dimension variant calling F[fname].
function DeconvolutionND._fixed(name, ndim, fname)
  local cls = DeconvolutionND:extend(name)
  cls._function_name = fname
  local fn = 'L.' .. name
  function cls:init(...)
    local a = args.parse(fn, DeconvolutionND._FIXED_SIGNATURE, select('#', ...), ...)
    self:_configure(name, ndim, a)
  end
  local f = F[fname]
  function cls:forward(x)
    if self.W._data == nil then self:_initialize_from(x) end
    return f(x, self.W, self.b, self:_options())
  end
  return cls
end

return {
  DeconvolutionND = DeconvolutionND,
  Deconvolution1D = DeconvolutionND._fixed('Deconvolution1D', 1, 'deconvolution_1d'),
  Deconvolution3D = DeconvolutionND._fixed('Deconvolution3D', 3, 'deconvolution_3d'),
}
