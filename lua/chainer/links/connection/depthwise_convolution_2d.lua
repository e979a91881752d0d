-- links/connection/depthwise_convolution_2d.lua:
-- L.DepthwiseConvolution2D(in_channels, channel_multiplier, ksize, stride = 1,
--   pad = 0, nobias = false, initialW, initial_bias)
-- W: (channel_multiplier, in_channels, kh, kw); b: (in_channels * channel_multiplier).
-- in_channels = nil infers it at the first call.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local DepthwiseConvolution2D = Link:extend('DepthwiseConvolution2D')
local SIGNATURE = args.signature { 'in_channels', 'channel_multiplier', 'ksize', 'stride', 'pad', 'nobias',
  'initialW', 'initial_bias' }

function DepthwiseConvolution2D:init(...)
  local a = args.parse('L.DepthwiseConvolution2D', SIGNATURE, select('#', ...), ...)
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
    local c = U.input_data('depthwise_convolution_2d', x).shape[2]
    self.in_channels = c
    self.W:initialize({ self.channel_multiplier, c, self.ksize[1], self.ksize[2] })
    if self.b then self.b:initialize({ c * self.channel_multiplier }) end
  end
  return F.depthwise_convolution_2d(x, self.W, self.b, { stride = self.stride, pad = self.pad })
end

return { DepthwiseConvolution2D = DepthwiseConvolution2D }
