-- links/connection/deformable_convolution_2d_sampler.lua:
-- L.DeformableConvolution2DSampler(in_channels, out_channels, ksize, stride = 1,
--   pad = 0, nobias = false, initialW, initial_bias)
-- The W, b part of a deformable convolution: forward(x, offset) samples x at
-- the offset positions and convolves.  W (out_channels, in_channels, kh, kw);
-- in_channels nil: inferred at the first call.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local Sampler = Link:extend('DeformableConvolution2DSampler')
local SIGNATURE = args.signature { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'nobias', 'initialW',
  'initial_bias' }

function Sampler:init(...)
  local a = args.parse('L.DeformableConvolution2DSampler', SIGNATURE, select('#', ...), ...)
  self.ksize = U.tuple(U.check_size('L.DeformableConvolution2DSampler', 'ksize', a.ksize, 2), 2)
  self.stride = a.stride or 1
  self.pad = a.pad or 0
  self.out_channels = a.out_channels
  self.W = U.param(U.weight_init(a.initialW, 'DeformableConvolution2D'),
    a.in_channels and { a.out_channels, a.in_channels, self.ksize[1], self.ksize[2] } or nil)
  if not a.nobias then
    self.b = U.param(U.bias_init(a.initial_bias, 'DeformableConvolution2D'), { a.out_channels })
  end
end

function Sampler:forward(x, offset)
  if self.W._data == nil then
    self.W:initialize({ self.out_channels, U.input_data('deformable_convolution_2d_sampler', x).shape[2], self.ksize[1], self.ksize[2] })
  end
  if F.deformable_convolution_2d_sampler == nil then
    error('DeformableConvolution2D: F.deformable_convolution_2d_sampler is not available', 2)
  end
  return F.deformable_convolution_2d_sampler(x, offset, self.W, self.b, { stride = self.stride, pad = self.pad })
end

return { DeformableConvolution2DSampler = Sampler }
