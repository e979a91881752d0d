-- links/connection/deconvolution_nd.lua: DeconvolutionND and its fixed-dimension
-- variants Deconvolution1D and Deconvolution3D (as Chainer's deconvolution_nd.py;
-- Deconvolution2D is in deconvolution_2d.lua, built the same way).
--
-- L.DeconvolutionND(ndim, in_channels, out_channels, ksize, stride, pad, nobias,
--   outsize, initialW, initial_bias, dilate, groups)
-- L.Deconvolution1D/3D(in_channels, out_channels, ksize, ...) the same without ndim.
-- W: (in_channels, out_channels/groups, k...), default LeCunNormal; b zeros.
-- in_channels = nil (or the (out_channels, ksize) form) infers it at the first call.
local args = require 'chainer._args'
local convolution_base = require 'chainer.links.connection._convolution_base'

local DeconvolutionND = convolution_base.family('DeconvolutionND', 'deconvolution_nd')

function DeconvolutionND:_configure_family(_, a)
  self.outsize = a.outsize
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

local ND_SIGNATURE = args.signature { 'ndim', 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'nobias',
  'outsize', 'initialW', 'initial_bias', 'dilate', 'groups' }

function DeconvolutionND:init(...)
  local a = args.parse('L.DeconvolutionND', ND_SIGNATURE, select('#', ...), ...)
  if type(a.ndim) ~= 'number' then error('DeconvolutionND: ndim must be a number', 3) end
  self:_configure('DeconvolutionND', a.ndim, a)
end

-- The arguments of the fixed-dimension variants: Chainer's order without `ndim`.
DeconvolutionND._FIXED_SIGNATURE = args.signature { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad',
  'nobias', 'outsize', 'initialW', 'initial_bias', 'dilate', 'groups' }

-- A fixed-dimension variant calling F[fname].
function DeconvolutionND._fixed(name, ndim, fname)
  return convolution_base.fixed(DeconvolutionND, name, ndim, DeconvolutionND._FIXED_SIGNATURE, fname)
end

return {
  DeconvolutionND = DeconvolutionND,
  Deconvolution1D = DeconvolutionND._fixed('Deconvolution1D', 1, 'deconvolution_1d'),
  Deconvolution3D = DeconvolutionND._fixed('Deconvolution3D', 3, 'deconvolution_3d'),
}
