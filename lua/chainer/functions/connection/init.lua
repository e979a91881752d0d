-- functions/connection: linear, bilinear, convolution and deconvolution
-- (1d/2d/3d/nd), depthwise and dilated convolution, local convolution,
-- embed_id, shift.
return require('chainer.functions._family')('connection', {
  'linear', 'bilinear', 'convolution_nd', 'deconvolution_nd', 'depthwise_convolution_2d', 'embed_id',
  'local_convolution_2d', 'shift',
}, {
  -- shared by the convolution files, not part of F
  conv_apply = true, deconv_apply = true, grad_w_apply = true, geometry = true, spatial = true, bias_axes = true,
})
