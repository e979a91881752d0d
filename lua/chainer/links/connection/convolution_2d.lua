-- links/connection/convolution_2d.lua: L.Convolution2D(in_channels, out_channels,
--   ksize, stride = 1, pad = 0, nobias = false, initialW, initial_bias,
--   {dilate = 1, groups = 1, cover_all = false})
-- L.Convolution2D(out_channels, ksize, ...) and in_channels = nil infer the
-- input channels at the first call.  W: (out_channels, in_channels/groups,
-- kh, kw), default LeCunNormal; b: (out_channels), default zeros.
-- The 2-d case of ConvolutionND (its constructor and lazy initialisation).
local args = require 'chainer._args'
local ConvolutionND = require('chainer.links.connection.convolution_nd').ConvolutionND

-- Chainer's keyword-only arguments (dilate, groups, cover_all) follow initial_bias.
local SIGNATURE = args.signature { 'in_channels', 'out_channels', 'ksize', 'stride', 'pad', 'nobias', 'initialW',
  'initial_bias', 'dilate', 'groups', 'cover_all' }

return { Convolution2D = ConvolutionND._fixed('Convolution2D', 2, SIGNATURE, 'convolution_2d') }
