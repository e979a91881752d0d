-- links/model/vision/bottleneck_b.lua: L.BottleneckB(in_channels, mid_channels, initialW)
-- ResNet's identity bottleneck: 1x1, 3x3, 1x1 convolutions (each with
-- BatchNormalization) added to the input; keeps the resolution and channel count.
local F = require 'chainer.functions'
local Chain = require('chainer.link').Chain
local Convolution2D = require('chainer.links.connection.convolution_2d').Convolution2D
local BatchNormalization = require('chainer.links.normalization.batch_normalization').BatchNormalization
local args = require 'chainer._args'

local BottleneckB = Chain:extend('BottleneckB')
local SIGNATURE = args.signature { 'in_channels', 'mid_channels', 'initialW' }

function BottleneckB:init(...)
  local a = args.parse('L.BottleneckB', SIGNATURE, select('#', ...), ...)
  local in_c, mid, initialW = a.in_channels, a.mid_channels, a.initialW
  local function c(i, o, k, p) return Convolution2D(i, o, k, { stride = 1, pad = p, initialW = initialW, nobias = true }) end
  self.conv1 = c(in_c, mid, 1, 0); self.bn1 = BatchNormalization(mid)
  self.conv2 = c(mid, mid, 3, 1); self.bn2 = BatchNormalization(mid)
  self.conv3 = c(mid, in_c, 1, 0); self.bn3 = BatchNormalization(in_c)
end

function BottleneckB:forward(x)
  local h = F.relu(self.bn1(self.conv1(x)))
  h = F.relu(self.bn2(self.conv2(h)))
  h = self.bn3(self.conv3(h))
  return F.relu(h + x)
end

return { BottleneckB = BottleneckB }
