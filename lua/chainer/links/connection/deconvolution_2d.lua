-- links/connection/deconvolution_2d.lua: L.Deconvolution2D(in_channels, out_channels,
--   ksize, stride = 1, pad = 0, nobias = false, outsize, initialW, initial_bias,
--   {dilate = 1, groups = 1})
-- W: (in_channels, out_channels/groups, kh, kw), default LeCunNormal; b zeros.
-- in_channels = nil (or the (out_channels, ksize) form) infers it at the first call.
-- The 2-d case of DeconvolutionND.
local DeconvolutionND = require('chainer.links.connection.deconvolution_nd').DeconvolutionND

return { Deconvolution2D = DeconvolutionND._fixed('Deconvolution2D', 2, 'deconvolution_2d') }
