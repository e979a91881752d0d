-- functions/pooling: max / average pooling (1-d, 2-d, 3-d, n-d),
-- unpooling, upsampling, spatial pyramid and ROI pooling.
return require('chainer.functions._family')('pooling', {
  'max_pooling', 'average_pooling', 'unpooling', 'upsampling_2d', 'spatial_pyramid_pooling_2d',
  'roi_pooling_2d', 'roi_average_align_2d', 'roi_max_pooling_2d', 'roi_average_pooling_2d', 'roi_max_align_2d',
})
