-- links/connection/deformable_convolution_2d.lua: L.DeformableConvolution2D(
--   in_channels, out_channels, ksize, stride = 1, pad = 0, {offset_nobias,
--   offset_initialW, offset_initial_bias, deform_nobias, deform_initialW,
--   deform_initial_bias})
-- Children offset_conv (a Convolution2D giving 2*kh*kw offset channels) and
-- deform_conv (a DeformableConvolution2DSampler).
local Chain = require('chainer.link').Chain
local Convolution2D = require('chainer.links.connection.convolution_2d').Convolution2D
local Sampler = require('chainer.links.connection.deformable_convolution_2d_sampler').DeformableConvolution2DSampler
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local DeformableConvolution2D = Chain:extend('DeformableConvolution2D')
local SIGNATURE = args.signature { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'offset_nobias',
  'offset_initialW', 'offset_initial_bias', 'deform_nobias', 'deform_initialW', 'deform_initial_bias' }

function DeformableConvolution2D:init(...)
  local a = args.parse('L.DeformableConvolution2D', SIGNATURE, select('#', ...), ...)
  local k = U.tuple(U.check_size('L.DeformableConvolution2D', 'ksize', a.ksize, 2), 2)
  self.offset_conv = Convolution2D(a.in_channels, 2 * k[1] * k[2], k, { stride = a.stride, pad = a.pad,
    nobias = a.offset_nobias, initialW = a.offset_initialW, initial_bias = a.offset_initial_bias })
  self.deform_conv = Sampler(a.in_channels, a.out_channels, k, a.stride, a.pad, a.deform_nobias,
    a.deform_initialW, a.deform_initial_bias)
end

function DeformableConvolution2D:forward(x)
  return self.deform_conv(x, self.offset_conv(x))
end

return { DeformableConvolution2D = DeformableConvolution2D }
