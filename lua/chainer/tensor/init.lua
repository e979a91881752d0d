-- chainer.tensor: n-dimensional arrays on the chainlua runtime.
-- The namespace offers NumPy-like functions (tensor.zeros, tensor.add, ...);
-- every tensor has the matching methods (t:sum{axis = 1}) and operators.
local M = require 'chainer.tensor.core'
require 'chainer.tensor.creation'
require 'chainer.tensor.views'
require 'chainer.tensor.print'
-- families of operations; each file adds functions to M and methods to M.methods
for _, family in ipairs({ 'elementwise', 'reduce', 'linalg', 'join', 'index', 'sort', 'random', 'io' }) do
  local ok, err = pcall(require, 'chainer.tensor.' .. family)
  if not ok and not tostring(err):find("module 'chainer.tensor." .. family .. "' not found", 1, true) then
    error(err, 0)
  end
end
return M
