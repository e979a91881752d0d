-- links/connection/convolution_nd.lua: Convolution1D/2D/3D/ND,
-- DilatedConvolution2D, DepthwiseConvolution2D.
--
-- L.Convolution2D(in_channels, out_channels, ksize, stride, pad, nobias,
--   initialW, initial_bias, {dilate =, groups =})
-- L.Convolution2D(out_channels, ksize, ...) and in_channels = nil infer the
-- input channels at the first call.  W: (out_channels, in_channels/groups,
-- k...), default LeCunNormal; b: (out_channels), default zeros.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local U = require 'chainer.links._util'

local M = {}

local ConvolutionND = Link:extend('ConvolutionND')

-- Shared constructor: a = table of Chainer's arguments, ndim = spatial dims.
local function setup_conv(self, fn, ndim, a)
  local in_channels, out_channels, ksize = a.in_channels, a.out_channels, a.ksize
  if ksize == nil then
    -- Convolution2D(out_channels, ksize): in_channels inferred
    in_channels, out_channels, ksize = nil, in_channels, out_channels
  end
  if in_channels == false then in_channels = nil end
  if type(out_channels) ~= 'number' then
    error(fn .. ': out_channels must be a number (got ' .. type(out_channels) .. ')', 4)
  end
  if ksize == nil then error(fn .. ': ksize is required', 4) end
  self.ndim = ndim
  self.in_channels = in_channels
  self.out_channels = out_channels
  self.ksize = U.tuple(ksize, ndim)
  if #self.ksize ~= ndim then
    error(string.format('%s: ksize must be a number or %d numbers', fn, ndim), 4)
  end
  self.stride = a.stride or 1
  self.pad = a.pad or 0
  self.dilate = a.dilate or 1
  self.groups = a.groups or 1
  self.cover_all = a.cover_all and true or false
  self.nobias = a.nobias and true or false
  if in_channels ~= nil and in_channels % self.groups ~= 0 then
    error(string.format('%s: in_channels (%d) must be divisible by groups (%d)', fn, in_channels, self.groups), 4)
  end
  if out_channels % self.groups ~= 0 then
    error(string.format('%s: out_channels (%d) must be divisible by groups (%d)', fn, out_channels, self.groups), 4)
  end
  self.W = U.param(U.weight_init(a.initialW, fn), in_channels and self:_w_shape(in_channels) or nil)
  if not self.nobias then
    self.b = U.param(U.bias_init(a.initial_bias, fn), { out_channels })
  end
end
M._setup_conv = setup_conv

function ConvolutionND:_w_shape(in_channels)
  local s = { self.out_channels, in_channels / self.groups }
  for i = 1, self.ndim do s[#s + 1] = self.ksize[i] end
  return s
end

local nd_names = { 'ndim', 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'nobias', 'initialW',
  'initial_bias', 'cover_all', 'dilate', 'groups' }

function ConvolutionND:init(...)
  local a = U.args('ConvolutionND', nd_names, select('#', ...), ...)
  if type(a.ndim) ~= 'number' then error('ConvolutionND: ndim must be a number', 3) end
  setup_conv(self, 'ConvolutionND', a.ndim, a)
end

function ConvolutionND:printable_specs()
  return { { 'in_channels', self.in_channels }, { 'out_channels', self.out_channels }, { 'ksize', self.ksize },
    { 'stride', self.stride }, { 'pad', self.pad }, { 'nobias', self.nobias }, { 'dilate', self.dilate },
    { 'groups', self.groups } }
end

function ConvolutionND:_initialize_params(in_channels)
  if in_channels % self.groups ~= 0 then
    error(string.format('%s: the input has %d channels, not divisible by groups (%d)',
      getmetatable(self).__name, in_channels, self.groups), 4)
  end
  self.in_channels = in_channels
  self.W:initialize(self:_w_shape(in_channels))
end

function ConvolutionND:forward(x)
  if self.W._data == nil then
    local xd = U.data(x)
    if xd == nil or xd.ptr.nd < 2 then
      error(getmetatable(self).__name .. ': x must be a tensor or Variable of shape (N, C, ...)', 2)
    end
    self:_initialize_params(xd.shape[2])
  end
  return F.convolution_nd(x, self.W, self.b, { stride = self.stride, pad = self.pad, cover_all = self.cover_all,
    dilate = self.dilate, groups = self.groups })
end
M.ConvolutionND = ConvolutionND

-- Fixed-dimension variants: Chainer's argument order without `ndim`.
local function fixed(name, ndim, names, fname)
  local cls = ConvolutionND:extend(name)
  function cls:init(...)
    local a = U.args(name, names, select('#', ...), ...)
    setup_conv(self, name, ndim, a)
  end
  local f = F[fname]
  function cls:forward(x)
    if self.W._data == nil then
      local xd = U.data(x)
      if xd == nil or xd.ptr.nd < 2 then
        error(name .. ': x must be a tensor or Variable of shape (N, C, ...)', 2)
      end
      self:_initialize_params(xd.shape[2])
    end
    return f(x, self.W, self.b, { stride = self.stride, pad = self.pad, cover_all = self.cover_all,
      dilate = self.dilate, groups = self.groups })
  end
  return cls
end

local names_1d3d = { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'nobias', 'initialW', 'initial_bias',
  'cover_all', 'dilate', 'groups' }
local names_2d = { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'nobias', 'initialW', 'initial_bias',
  'dilate', 'groups', 'cover_all' }

M.Convolution1D = fixed('Convolution1D', 1, names_1d3d, 'convolution_1d')
M.Convolution2D = fixed('Convolution2D', 2, names_2d, 'convolution_2d')
M.Convolution3D = fixed('Convolution3D', 3, names_1d3d, 'convolution_3d')

-- DilatedConvolution2D(in_channels, out_channels, ksize, stride, pad, dilate, nobias, initialW, initial_bias)
local DilatedConvolution2D = M.Convolution2D:extend('DilatedConvolution2D')
local names_dil = { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'dilate', 'nobias', 'initialW',
  'initial_bias' }
function DilatedConvolution2D:init(...)
  local a = U.args('DilatedConvolution2D', names_dil, select('#', ...), ...)
  setup_conv(self, 'DilatedConvolution2D', 2, a)
end
M.DilatedConvolution2D = DilatedConvolution2D

-- DepthwiseConvolution2D(in_channels, channel_multiplier, ksize, stride, pad, nobias, initialW, initial_bias)
-- W: (channel_multiplier, in_channels, kh, kw); b: (in_channels * channel_multiplier).
local DepthwiseConvolution2D = Link:extend('DepthwiseConvolution2D')
local names_dw = { 'in_channels', 'channel_multiplier', 'ksize', 'stride', 'pad', 'nobias', 'initialW',
  'initial_bias' }
function DepthwiseConvolution2D:init(...)
  local a = U.args('DepthwiseConvolution2D', names_dw, select('#', ...), ...)
  if type(a.channel_multiplier) ~= 'number' then
    error('DepthwiseConvolution2D: channel_multiplier must be a number', 3)
  end
  if a.ksize == nil then error('DepthwiseConvolution2D: ksize is required', 3) end
  self.in_channels = a.in_channels
  self.channel_multiplier = a.channel_multiplier
  self.ksize = U.tuple(a.ksize, 2)
  self.stride = a.stride or 1
  self.pad = a.pad or 0
  self.nobias = a.nobias and true or false
  self.W = U.param(U.weight_init(a.initialW, 'DepthwiseConvolution2D'),
    a.in_channels and { a.channel_multiplier, a.in_channels, self.ksize[1], self.ksize[2] } or nil)
  if not self.nobias then
    self.b = U.param(U.bias_init(a.initial_bias, 'DepthwiseConvolution2D'),
      a.in_channels and { a.in_channels * a.channel_multiplier } or nil)
  end
end
function DepthwiseConvolution2D:forward(x)
  if self.W._data == nil then
    local c = U.data(x).shape[2]
    self.in_channels = c
    self.W:initialize({ self.channel_multiplier, c, self.ksize[1], self.ksize[2] })
    if self.b then self.b:initialize({ c * self.channel_multiplier }) end
  end
  return F.depthwise_convolution_2d(x, self.W, self.b, { stride = self.stride, pad = self.pad })
end
M.DepthwiseConvolution2D = DepthwiseConvolution2D

return M
