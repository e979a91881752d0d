-- chainer.links (L): parameterised layers built on chainer.functions.
-- Each file returns a table of link classes; this index merges them.
local M = {}

local files = {
  'connection.linear', 'connection.convolution_nd', 'connection.deconvolution_nd', 'connection.embed_id',
}

for _, f in ipairs(files) do
  for k, v in pairs(require('chainer.links.' .. f)) do
    if k:sub(1, 1) ~= '_' then M[k] = v end
  end
end

return M
