-- functions/activation: the activation family.  Each file returns a table;
-- its lower-case functions are merged here and exported into F by
-- functions/init.lua.  lstm, slstm and tree_lstm are optional here while
-- they are being written.
local files = {
  'relu', 'leaky_relu', 'clipped_relu', 'crelu', 'elu', 'hard_sigmoid', 'sigmoid', 'tanh', 'softplus',
  'softmax', 'swish', 'prelu', 'maxout', 'rrelu',
}
local optional = { 'lstm', 'slstm', 'tree_lstm' }

local M = {}
local function merge(mod)
  for k, v in pairs(mod) do
    if type(v) == 'function' and k:match('^[a-z]') then M[k] = v end
  end
end
for _, name in ipairs(files) do merge(require('chainer.functions.activation.' .. name)) end
for _, name in ipairs(optional) do
  local ok, mod = pcall(require, 'chainer.functions.activation.' .. name)
  if ok then merge(mod)
  elseif not tostring(mod):find("module 'chainer.functions.activation." .. name .. "' not found", 1, true) then
    error(mod, 0)
  end
end
return M
