-- links/connection/inception.lua: Inception, InceptionBN, MLPConvolution2D.
local F = require 'chainer.functions'
local link = require 'chainer.link'
local Chain, ChainList = link.Chain, link.ChainList
local conv = require 'chainer.links.connection.convolution_nd'
local Convolution2D = conv.Convolution2D
local BatchNormalization = require('chainer.links.normalization.batch_normalization').BatchNormalization
local U = require 'chainer.links._util'

local M = {}

-- Inception(in_channels, out1, proj3, out3, proj5, out5, proj_pool, conv_init, bias_init)
-- (GoogLeNet's module; output channels out1 + out3 + out5 + proj_pool).
local Inception = Chain:extend('Inception')
local inames = { 'in_channels', 'out1', 'proj3', 'out3', 'proj5', 'out5', 'proj_pool', 'conv_init', 'bias_init' }
function Inception:init(...)
  local a = U.args('Inception', inames, select('#', ...), ...)
  local o = { initialW = a.conv_init, initial_bias = a.bias_init }
  local function c(i, n, k, pad)
    return Convolution2D(i, n, k, { pad = pad, initialW = o.initialW, initial_bias = o.initial_bias })
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
M.Inception = Inception

-- InceptionBN(in_channels, out1, proj3, out3, proj33, out33, pooltype, proj_pool, stride = 1, conv_init, dtype)
local InceptionBN = Chain:extend('InceptionBN')
local bnames = { 'in_channels', 'out1', 'proj3', 'out3', 'proj33', 'out33', 'pooltype', 'proj_pool', 'stride',
  'conv_init', 'dtype' }
function InceptionBN:init(...)
  local a = U.args('InceptionBN', bnames, select('#', ...), ...)
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
M.InceptionBN = InceptionBN

-- MLPConvolution2D(in_channels, out_channels (list), ksize, stride = 1, pad = 0,
--   activation = F.relu, conv_init, bias_init): a conv then 1x1 convs.
local MLPConvolution2D = ChainList:extend('MLPConvolution2D')
local mnames = { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'activation', 'conv_init', 'bias_init' }
function MLPConvolution2D:init(...)
  ChainList.init(self)
  local a = U.args('MLPConvolution2D', mnames, select('#', ...), ...)
  local in_channels, out_channels, ksize = a.in_channels, a.out_channels, a.ksize
  if ksize == nil then in_channels, out_channels, ksize = nil, in_channels, out_channels end
  if type(out_channels) ~= 'table' or #out_channels == 0 then
    error('MLPConvolution2D: out_channels must be a non-empty list of channel counts', 3)
  end
  rawset(self, 'activation', a.activation or F.relu)
  local o = { stride = a.stride or 1, pad = a.pad or 0, initialW = a.conv_init, initial_bias = a.bias_init }
  self:add_link(Convolution2D(in_channels, out_channels[1], ksize, o))
  for i = 2, #out_channels do
    self:add_link(Convolution2D(out_channels[i - 1], out_channels[i], 1,
      { initialW = a.conv_init, initial_bias = a.bias_init }))
  end
end
function MLPConvolution2D:forward(x)
  local n = #self._children
  for i = 1, n - 1 do x = self.activation(self._children[i](x)) end
  return self._children[n](x)
end
M.MLPConvolution2D = MLPConvolution2D

return M
