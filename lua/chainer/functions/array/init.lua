-- functions/array: the array family (shape manipulation, joining,
-- indexing, resampling).  Each file returns a table; its lower-case
-- functions are merged here and exported into F by functions/init.lua.
local files = {
  'reshape', 'broadcast_to', 'transpose', 'broadcast', 'axes', 'concat', 'split_axis', 'tile', 'repeat',
  'pad', 'flip', 'where', 'cast', 'copy', 'select_item', 'depth2space', 'diagonal', 'permutate', 'get_item',
  'scatter_add', 'im2col', 'resize_images', 'spatial_transformer', 'pad_sequence', 'transpose_sequence',
  'deformable_convolution_2d_sampler',
}

local M = {}
for _, name in ipairs(files) do
  local mod = require('chainer.functions.array.' .. name)
  for k, v in pairs(mod) do
    if type(v) == 'function' and k:match('^[a-z]') then M[k] = v end
  end
end
-- `repeat` is a Lua keyword: F['repeat'] and F.repeat_ are the same function
M['repeat'] = M.repeat_
return M
