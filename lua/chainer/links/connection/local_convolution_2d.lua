-- links/connection/local_convolution_2d.lua: L.LocalConvolution2D(in_channels,
--   out_channels, in_size, ksize, stride = 1, nobias = false, initialW, initial_bias)
-- A convolution with unshared weights: W (out_channels, out_h, out_w,
-- in_channels, kh, kw), b (out_channels, out_h, out_w).  in_channels or
-- in_size nil: W and b are initialised at the first call.
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'

local LocalConvolution2D = Link:extend('LocalConvolution2D')
local SIGNATURE = args.signature { 'in_channels', 'out_channels', 'in_size', 'ksize', 'stride', 'nobias',
  'initialW', 'initial_bias' }

-- Chainer's get_conv_outsize without padding (chainer.utils.conv)
local conv_outsize = require('chainer.utils.conv').conv_outsize
local function outsize(size, k, s) return conv_outsize(size, k, s, 0, false) end

function LocalConvolution2D:init(...)
  local a = args.parse('L.LocalConvolution2D', SIGNATURE, select('#', ...), ...)
  self.ksize = U.tuple(a.ksize, 2)
  self.stride = U.tuple(a.stride or 1, 2)
  self.nobias = a.nobias and true or false
  self.out_channels = a.out_channels
  self.W = U.param(U.weight_init(a.initialW, 'LocalConvolution2D'))
  if not self.nobias then self.b = U.param(U.bias_init(a.initial_bias, 'LocalConvolution2D')) end
  if a.in_channels ~= nil and a.in_size ~= nil then self:_initialize_params(a.in_channels, U.tuple(a.in_size, 2)) end
end

function LocalConvolution2D:_initialize_params(in_channels, in_size)
  local oh = outsize(in_size[1], self.ksize[1], self.stride[1])
  local ow = outsize(in_size[2], self.ksize[2], self.stride[2])
  -- Chainer's layout (what F.local_convolution_2d takes)
  self.W:initialize({ self.out_channels, oh, ow, in_channels, self.ksize[1], self.ksize[2] })
  if self.b then self.b:initialize({ self.out_channels, oh, ow }) end
end

function LocalConvolution2D:forward(x)
  if self.W._data == nil then
    local s = U.input_data('local_convolution_2d', x).shape
    self:_initialize_params(s[2], { s[3], s[4] })
  end
  if F.local_convolution_2d == nil then error('LocalConvolution2D: F.local_convolution_2d is not available', 2) end
  return F.local_convolution_2d(x, self.W, self.b, self.stride)
end

return { LocalConvolution2D = LocalConvolution2D }
