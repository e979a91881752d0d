-- links/connection/mlp_convolution_2d.lua: L.MLPConvolution2D(in_channels,
--   out_channels (a list), ksize, stride = 1, pad = 0, activation = F.relu,
--   conv_init, bias_init)
-- A ksize convolution to out_channels[1], then 1x1 convolutions through the
-- rest of the list, with `activation` between them (Network in Network).
-- The (out_channels, ksize) form infers in_channels at the first call.
local F = require 'chainer.functions'
local ChainList = require('chainer.link').ChainList
local Convolution2D = require('chainer.links.connection.convolution_2d').Convolution2D
local args = require 'chainer._args'

local MLPConvolution2D = ChainList:extend('MLPConvolution2D')
local SIGNATURE = args.signature { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'activation',
  'conv_init', 'bias_init' }

function MLPConvolution2D:init(...)
  ChainList.init(self)
  local a = args.parse('L.MLPConvolution2D', SIGNATURE, select('#', ...), ...)
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

return { MLPConvolution2D = MLPConvolution2D }
