-- links/connection/local_convolution_2d.lua: LocalConvolution2D, DeformableConvolution2D.
local F = require 'chainer.functions'
local link = require 'chainer.link'
local Link, Chain = link.Link, link.Chain
local Convolution2D = require('chainer.links.connection.convolution_nd').Convolution2D
local U = require 'chainer.links._util'

local M = {}

local function outsize(size, k, s) return math.floor((size - k) / s) + 1 end

-- LocalConvolution2D(in_channels, out_channels, in_size, ksize, stride = 1, nobias, initialW, initial_bias)
-- W: (out_channels, out_h, out_w, in_channels, kh, kw); b: (out_channels, out_h, out_w).
local LocalConvolution2D = Link:extend('LocalConvolution2D')
local names = { 'in_channels', 'out_channels', 'in_size', 'ksize', 'stride', 'nobias', 'initialW', 'initial_bias' }
function LocalConvolution2D:init(...)
  local a = U.args('LocalConvolution2D', names, select('#', ...), ...)
  self.ksize = U.tuple(a.ksize, 2)
  self.stride = U.tuple(a.stride or 1, 2)
  self.nobias = a.nobias and true or false
  self.out_channels = a.out_channels
  self.W = U.param(U.weight_init(a.initialW, 'LocalConvolution2D'))
  if not self.nobias then self.b = U.param(U.bias_init(a.initial_bias, 'LocalConvolution2D')) end
  if a.in_channels ~= nil and a.in_size ~= nil then self:_initialize_params(a.in_channels, U.tuple(a.in_size, 2)) end
end
function LocalConvolution2D:_initialize_params(in_channels, in_size)
  local oh = outsize(in_size[1], self.ksize[1], self.stride[1])
  local ow = outsize(in_size[2], self.ksize[2], self.stride[2])
  -- Chainer's layout (what F.local_convolution_2d takes)
  self.W:initialize({ self.out_channels, oh, ow, in_channels, self.ksize[1], self.ksize[2] })
  if self.b then self.b:initialize({ self.out_channels, oh, ow }) end
end
function LocalConvolution2D:forward(x)
  if self.W._data == nil then
    local s = U.data(x).shape
    self:_initialize_params(s[2], { s[3], s[4] })
  end
  if F.local_convolution_2d == nil then error('LocalConvolution2D: F.local_convolution_2d is not available', 2) end
  return F.local_convolution_2d(x, self.W, self.b, self.stride)
end
M.LocalConvolution2D = LocalConvolution2D

-- DeformableConvolution2DSampler: the W, b part of a deformable convolution.
local Sampler = Link:extend('DeformableConvolution2DSampler')
function Sampler:init(in_channels, out_channels, ksize, stride, pad, nobias, initialW, initial_bias)
  self.ksize = U.tuple(ksize, 2)
  self.stride = stride or 1
  self.pad = pad or 0
  self.out_channels = out_channels
  self.W = U.param(U.weight_init(initialW, 'DeformableConvolution2D'),
    in_channels and { out_channels, in_channels, self.ksize[1], self.ksize[2] } or nil)
  if not nobias then self.b = U.param(U.bias_init(initial_bias, 'DeformableConvolution2D'), { out_channels }) end
end
function Sampler:forward(x, offset)
  if self.W._data == nil then
    self.W:initialize({ self.out_channels, U.data(x).shape[2], self.ksize[1], self.ksize[2] })
  end
  if F.deformable_convolution_2d_sampler == nil then
    error('DeformableConvolution2D: F.deformable_convolution_2d_sampler is not available', 2)
  end
  return F.deformable_convolution_2d_sampler(x, offset, self.W, self.b, { stride = self.stride, pad = self.pad })
end
M.DeformableConvolution2DSampler = Sampler

-- DeformableConvolution2D(in_channels, out_channels, ksize, stride = 1, pad = 0, {offset_nobias,
--   offset_initialW, offset_initial_bias, deform_nobias, deform_initialW, deform_initial_bias})
local DeformableConvolution2D = Chain:extend('DeformableConvolution2D')
local dnames = { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'offset_nobias', 'offset_initialW',
  'offset_initial_bias', 'deform_nobias', 'deform_initialW', 'deform_initial_bias' }
function DeformableConvolution2D:init(...)
  local a = U.args('DeformableConvolution2D', dnames, select('#', ...), ...)
  local k = U.tuple(a.ksize, 2)
  self.offset_conv = Convolution2D(a.in_channels, 2 * k[1] * k[2], k, { stride = a.stride, pad = a.pad,
    nobias = a.offset_nobias, initialW = a.offset_initialW, initial_bias = a.offset_initial_bias })
  self.deform_conv = Sampler(a.in_channels, a.out_channels, k, a.stride, a.pad, a.deform_nobias,
    a.deform_initialW, a.deform_initial_bias)
end
function DeformableConvolution2D:forward(x)
  return self.deform_conv(x, self.offset_conv(x))
end
M.DeformableConvolution2D = DeformableConvolution2D

return M
