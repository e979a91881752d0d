-- functions/pooling: max / average pooling (1-d, 2-d, 3-d, n-d),
-- unpooling, upsampling, spatial pyramid and ROI pooling.
local files = {
  'max_pooling', 'average_pooling', 'unpooling', 'upsampling_2d', 'spatial_pyramid_pooling_2d',
}
local optional = { 'roi_pooling_2d', 'roi_average_align_2d' }

local M = {}
local function merge(mod)
  for k, v in pairs(mod) do
    if type(v) == 'function' and k:match('^[a-z]') then M[k] = v end
  end
end
for _, name in ipairs(files) do merge(require('chainer.functions.pooling.' .. name)) end
for _, name in ipairs(optional) do
  local ok, mod = pcall(require, 'chainer.functions.pooling.' .. name)
  if ok then merge(mod)
  elseif not tostring(mod):find("module 'chainer.functions.pooling." .. name .. "' not found", 1, true) then
    error(mod, 0)
  end
end
return M
