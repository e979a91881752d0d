-- links/connection/inceptionbn.lua: L.InceptionBN(in_channels, out1, proj3, out3,
--   proj33, out33, pooltype, proj_pool = nil, stride = 1, conv_init, dtype)
-- The Inception module with batch normalization (Inception v2): convolutions
-- without bias, each followed by BatchNormalization and relu; pooltype 'max'
-- or 'avg'; out1 = 0 drops the 1x1 branch.
local F = require 'chainer.functions'
local Chain = require('chainer.link').Chain
local Convolution2D = require('chainer.links.connection.convolution_2d').Convolution2D
local BatchNormalization = require('chainer.links.normalization.batch_normalization').BatchNormalization
local args = require 'chainer._args'

local InceptionBN = Chain:extend('InceptionBN')
local SIGNATURE = args.signature { 'in_channels', 'out1', 'proj3', 'out3', 'proj33', 'out33', 'pooltype',
  'proj_pool', 'stride', 'conv_init', 'dtype' }

function InceptionBN:init(...)
  local a = args.parse('L.InceptionBN', SIGNATURE, select('#', ...), ...)
  if a.pooltype ~= 'max' and a.pooltype ~= 'avg' then
    error("InceptionBN: pooltype must be 'max' or 'avg' (got " .. tostring(a.pooltype) .. ')', 3)
  end
  local stride = a.stride or 1
  self.out1, self.proj_pool, self.stride, self.pooltype = a.out1, a.proj_pool, stride, a.pooltype
  local w = a.conv_init
  local function c(i, n, k, s, p)
    return Convolution2D(i, n, k, { stride = s, pad = p, initialW = w, nobias = true })
  end
  local function bn(n) return BatchNormalization(n, { dtype = a.dtype }) end
  if a.out1 > 0 then
    self.conv1 = c(a.in_channels, a.out1, 1, stride, 0)
    self.conv1n = bn(a.out1)
  end
  self.proj3 = c(a.in_channels, a.proj3, 1, 1, 0)
  self.conv3 = c(a.proj3, a.out3, 3, stride, 1)
  self.proj33 = c(a.in_channels, a.proj33, 1, 1, 0)
  self.conv33a = c(a.proj33, a.out33, 3, 1, 1)
  self.conv33b = c(a.out33, a.out33, 3, stride, 1)
  self.proj3n = bn(a.proj3)
  self.conv3n = bn(a.out3)
  self.proj33n = bn(a.proj33)
  self.conv33an = bn(a.out33)
  self.conv33bn = bn(a.out33)
  if a.proj_pool ~= nil then
    self.poolp = c(a.in_channels, a.proj_pool, 1, 1, 0)
    self.poolpn = bn(a.proj_pool)
  end
end

function InceptionBN:forward(x)
  local outs = {}
  if self.out1 > 0 then outs[#outs + 1] = F.relu(self.conv1n(self.conv1(x))) end
  local h3 = F.relu(self.proj3n(self.proj3(x)))
  outs[#outs + 1] = F.relu(self.conv3n(self.conv3(h3)))
  local h33 = F.relu(self.proj33n(self.proj33(x)))
  h33 = F.relu(self.conv33an(self.conv33a(h33)))
  outs[#outs + 1] = F.relu(self.conv33bn(self.conv33b(h33)))
  local p
  if self.pooltype == 'max' then
    p = F.max_pooling_2d(x, 3, { stride = self.stride, pad = 1, cover_all = false })
  else
    p = F.average_pooling_2d(x, 3, { stride = self.stride, pad = 1 })
  end
  if self.proj_pool ~= nil then p = F.relu(self.poolpn(self.poolp(p))) end
  outs[#outs + 1] = p
  return F.concat(outs, 1)
end

return { InceptionBN = InceptionBN }
