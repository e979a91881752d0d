-- links/connection/dilated_convolution_2d.lua:
-- L.DilatedConvolution2D(in_channels, out_channels, ksize, stride = 1, pad = 0,
--   dilate = 1, nobias = false, initialW, initial_bias)
-- A Convolution2D with Chainer's older argument order (dilate before nobias).
local args = require 'chainer._args'
local Convolution2D = require('chainer.links.connection.convolution_2d').Convolution2D

local DilatedConvolution2D = Convolution2D:extend('DilatedConvolution2D')
local SIGNATURE = args.signature { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'dilate', 'nobias',
  'initialW', 'initial_bias' }

function DilatedConvolution2D:init(...)
  local a = args.parse('L.DilatedConvolution2D', SIGNATURE, select('#', ...), ...)
  self:_configure('DilatedConvolution2D', 2, a)
end

return { DilatedConvolution2D = DilatedConvolution2D }
