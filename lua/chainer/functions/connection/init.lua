-- functions/connection: linear, bilinear, convolution and deconvolution
-- (1d/2d/3d/nd), depthwise and dilated convolution, local convolution,
-- embed_id, shift.  Returns one table merging the files' functions.
local M = {}

local files = {
  'linear', 'bilinear', 'convolution_nd', 'deconvolution_nd', 'depthwise_convolution_2d', 'embed_id',
  'local_convolution_2d', 'shift',
}

for _, name in ipairs(files) do
  local ok, mod = pcall(require, 'chainer.functions.connection.' .. name)
  if ok then
    for k, v in pairs(mod) do
      if type(v) == 'function' and k:match('^[a-z]') then M[k] = v end
    end
  elseif not tostring(mod):find("module 'chainer.functions.connection." .. name .. "' not found", 1, true) then
    error(mod, 0)
  end
end

return M
