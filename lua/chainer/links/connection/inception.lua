-- links/connection/inception.lua: L.Inception(in_channels, out1, proj3, out3,
--   proj5, out5, proj_pool, conv_init, bias_init)
-- GoogLeNet's module: 1x1, 1x1->3x3, 1x1->5x5 and 3x3 max pool->1x1
-- branches, concatenated (out1 + out3 + out5 + proj_pool channels), relu.
local F = require 'chainer.functions'
local Chain = require('chainer.link').Chain
local Convolution2D = require('chainer.links.connection.convolution_2d').Convolution2D
local args = require 'chainer._args'

local Inception = Chain:extend('Inception')
local SIGNATURE = args.signature { 'in_channels', 'out1', 'proj3', 'out3', 'proj5', 'out5', 'proj_pool',
  'conv_init', 'bias_init' }

function Inception:init(...)
  local a = args.parse('L.Inception', SIGNATURE, select('#', ...), ...)
  local function c(i, n, k, pad)
    return Convolution2D(i, n, k, { pad = pad, initialW = a.conv_init, initial_bias = a.bias_init })
  end
  self.conv1 = c(a.in_channels, a.out1, 1, 0)
  self.proj3 = c(a.in_channels, a.proj3, 1, 0)
  self.conv3 = c(a.proj3, a.out3, 3, 1)
  self.proj5 = c(a.in_channels, a.proj5, 1, 0)
  self.conv5 = c(a.proj5, a.out5, 5, 2)
  self.projp = c(a.in_channels, a.proj_pool, 1, 0)
end

function Inception:forward(x)
  local out1 = self.conv1(x)
  local out3 = self.conv3(F.relu(self.proj3(x)))
  local out5 = self.conv5(F.relu(self.proj5(x)))
  local pool = self.projp(F.max_pooling_2d(x, 3, { stride = 1, pad = 1 }))
  return F.relu(F.concat({ out1, out3, out5, pool }, 1))
end

return { Inception = Inception }
