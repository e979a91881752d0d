-- links/connection/convolution_nd.lua: ConvolutionND and its fixed-dimension
-- variants Convolution1D and Convolution3D (as Chainer's convolution_nd.py;
-- Convolution2D is in convolution_2d.lua, built the same way).
--
-- L.ConvolutionND(ndim, in_channels, out_channels, ksize, stride, pad, nobias,
--   initialW, initial_bias, cover_all, dilate, groups)
-- L.Convolution1D/3D(in_channels, out_channels, ksize, ...) the same without ndim.
-- The (out_channels, ksize) form and in_channels = nil infer the input
-- channels at the first call.  W: (out_channels, in_channels/groups, k...),
-- default LeCunNormal; b: (out_channels), default zeros.
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local convolution_base = require 'chainer.links.connection._convolution_base'

local ConvolutionND = convolution_base.family('ConvolutionND', 'convolution_nd')

-- Convolution's own arguments and checks, within ConvolutionBase:_configure
-- (error levels: this, _configure, the subclass init, Link.new, the user).
function ConvolutionND:_configure_family(fn, a)
  if #self.ksize ~= self.ndim then
    error(string.format('%s: ksize must be a number or %d numbers', fn, self.ndim), 5)
  end
  self.cover_all = a.cover_all and true or false
  local in_channels = self.in_channels
  if in_channels ~= nil and in_channels % self.groups ~= 0 then
    error(string.format('%s: in_channels (%d) must be divisible by groups (%d)', fn, in_channels, self.groups), 5)
  end
end

function ConvolutionND:_w_shape(in_channels)
  local s = { self.out_channels, in_channels / self.groups }
  for i = 1, self.ndim do s[#s + 1] = self.ksize[i] end
  return s
end

local ND_SIGNATURE = args.signature { 'ndim', 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'nobias',
  'initialW', 'initial_bias', 'cover_all', 'dilate', 'groups' }

function ConvolutionND:init(...)
  local a = args.parse('L.ConvolutionND', ND_SIGNATURE, select('#', ...), ...)
  if type(a.ndim) ~= 'number' then error('ConvolutionND: ndim must be a number', 3) end
  self:_configure('ConvolutionND', a.ndim, a)
end

-- ConvolutionND.from_params(W, b, stride, pad, nobias, {cover_all =,
-- dilate =, groups =}): ndim is W's axes minus two (Chainer 7).
-- The constructor arguments of from_params (parsed as `a`) for an ndim-d
-- convolution: in_channels, out_channels, ksize, stride, pad, nobias, options.
local function from_params_arguments(fn, a, ndim)
  local w, b = U.from_params_arrays(fn, a.W, a.b, ndim + 2)
  local groups = a.groups or 1
  local ksize = {}
  for i = 1, ndim do ksize[i] = w.shape[i + 2] end
  return w.shape[2] * groups, w.shape[1], ksize, a.stride or 1, a.pad or 0, a.nobias or false,
    { initialW = w, initial_bias = b, cover_all = a.cover_all, dilate = a.dilate, groups = groups }
end

local ND_FROM_PARAMS = args.signature({ 'W', 'b', 'stride', 'pad', 'nobias' }, { 'cover_all', 'dilate', 'groups' })
function ConvolutionND.from_params(...)
  local fn = 'L.ConvolutionND.from_params'
  local a = args.parse(fn, ND_FROM_PARAMS, select('#', ...), ...)
  local wd = args.float_array(fn, 'W', a.W, 3)
  if wd.ndim < 3 then args.fail(fn .. ': W must be (out_channels, in_channels / groups, k1, ...)', 3) end
  return ConvolutionND(wd.ndim - 2, from_params_arguments(fn, a, wd.ndim - 2))
end

function ConvolutionND:printable_specs()
  return { { 'in_channels', self.in_channels }, { 'out_channels', self.out_channels }, { 'ksize', self.ksize },
    { 'stride', self.stride }, { 'pad', self.pad }, { 'nobias', self.nobias }, { 'dilate', self.dilate },
    { 'groups', self.groups } }
end

function ConvolutionND:_options()
  return { stride = self.stride, pad = self.pad, cover_all = self.cover_all, dilate = self.dilate,
    groups = self.groups }
end

-- At the first forward (error level: the caller of the forward's caller, as
-- ConvolutionBase:_initialize_from's own errors are the forward's caller).
function ConvolutionND:_check_input_channels(in_channels)
  if in_channels % self.groups ~= 0 then
    error(string.format('%s: the input has %d channels, not divisible by groups (%d)',
      getmetatable(self).__name, in_channels, self.groups), 5)
  end
end

-- A fixed-dimension variant: Chainer's argument order without `ndim`
-- (signature), calling F[fname].
function ConvolutionND._fixed(name, ndim, signature, fname)
  local cls = convolution_base.fixed(ConvolutionND, name, ndim, signature, fname)
  local fn = 'L.' .. name
  -- from_params(W, b, stride, pad, nobias, {cover_all =, dilate =, groups =})
  -- (Convolution2D: dilate and groups): Chainer 7's classmethod; in_channels
  -- is W's second axis times groups, ksize its last axes.
  local from_params_signature = args.signature({ 'W', 'b', 'stride', 'pad', 'nobias' },
    ndim == 2 and { 'dilate', 'groups' } or { 'cover_all', 'dilate', 'groups' })
  function cls.from_params(...)
    local pfn = fn .. '.from_params'
    return cls(from_params_arguments(pfn, args.parse(pfn, from_params_signature, select('#', ...), ...), ndim))
  end
  return cls
end

local SIGNATURE_1D_3D = args.signature { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'nobias',
  'initialW', 'initial_bias', 'cover_all', 'dilate', 'groups' }

return {
  ConvolutionND = ConvolutionND,
  Convolution1D = ConvolutionND._fixed('Convolution1D', 1, SIGNATURE_1D_3D, 'convolution_1d'),
  Convolution3D = ConvolutionND._fixed('Convolution3D', 3, SIGNATURE_1D_3D, 'convolution_3d'),
}
