-- functions/array: the array family (shape manipulation, joining,
-- indexing, resampling).
local M = require('chainer.functions._family')('array', {
  'reshape', 'broadcast_to', 'transpose', 'broadcast', 'axes', 'concat', 'split_axis', 'tile', 'repeat',
  'pad', 'flip', 'where', 'cast', 'copy', 'select_item', 'depth2space', 'diagonal', 'permutate', 'get_item',
  'scatter_add', 'im2col', 'resize_images', 'spatial_transformer', 'pad_sequence', 'transpose_sequence',
  'deformable_convolution_2d_sampler', 'as_strided',
})
-- `repeat` is a Lua keyword: F['repeat'] and F.repeat_ are the same function
M['repeat'] = M.repeat_
return M
