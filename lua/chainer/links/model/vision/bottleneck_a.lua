-- links/model/vision/bottleneck_a.lua: L.BottleneckA(in_channels, mid_channels,
--   out_channels, stride = 2, initialW, downsample_fb = false)
-- ResNet's first bottleneck of a stage: 1x1, 3x3, 1x1 convolutions (each
-- with BatchNormalization) plus a strided 1x1 projection of the input.
-- MSRA places the stride on the first 1x1 conv, fb.torch (downsample_fb) on the 3x3.
local F = require 'chainer.functions'
local Chain = require('chainer.link').Chain
local Convolution2D = require('chainer.links.connection.convolution_2d').Convolution2D
local BatchNormalization = require('chainer.links.normalization.batch_normalization').BatchNormalization
local args = require 'chainer._args'

local BottleneckA = Chain:extend('BottleneckA')
local SIGNATURE = args.signature { 'in_channels', 'mid_channels', 'out_channels', 'stride', 'initialW',
  'downsample_fb' }

function BottleneckA:init(...)
  local a = args.parse('L.BottleneckA', SIGNATURE, select('#', ...), ...)
  local in_c, mid, out_c, initialW = a.in_channels, a.mid_channels, a.out_channels, a.initialW
  local stride = a.stride or 2
  local s1, s2 = stride, 1
  if a.downsample_fb then s1, s2 = 1, stride end
  local function c(i, o, k, s, p) return Convolution2D(i, o, k, { stride = s, pad = p, initialW = initialW, nobias = true }) end
  self.conv1 = c(in_c, mid, 1, s1, 0); self.bn1 = BatchNormalization(mid)
  self.conv2 = c(mid, mid, 3, s2, 1); self.bn2 = BatchNormalization(mid)
  self.conv3 = c(mid, out_c, 1, 1, 0); self.bn3 = BatchNormalization(out_c)
  self.conv4 = c(in_c, out_c, 1, stride, 0); self.bn4 = BatchNormalization(out_c)
end

function BottleneckA:forward(x)
  local h1 = F.relu(self.bn1(self.conv1(x)))
  h1 = F.relu(self.bn2(self.conv2(h1)))
  h1 = self.bn3(self.conv3(h1))
  local h2 = self.bn4(self.conv4(x))
  return F.relu(h1 + h2)
end

return { BottleneckA = BottleneckA }
