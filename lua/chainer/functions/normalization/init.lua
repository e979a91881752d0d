-- functions/normalization: batch / fixed batch / batch re-, layer, group
-- and local response normalization, and L2 normalize.
local files = {
  'batch_normalization', 'batch_renormalization', 'layer_normalization', 'group_normalization',
  'local_response_normalization', 'l2_normalization',
}

local M = {}
for _, name in ipairs(files) do
  local ok, mod = pcall(require, 'chainer.functions.normalization.' .. name)
  if ok then
    for k, v in pairs(mod) do
      if type(v) == 'function' and k:match('^[a-z]') then M[k] = v end
    end
  elseif not tostring(mod):find("module 'chainer.functions.normalization." .. name .. "' not found", 1, true) then
    error(mod, 0)
  end
end
return M
