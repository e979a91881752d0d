-- chainer.tensor: n-dimensional arrays on the chainlua runtime.
-- The namespace offers NumPy-like functions (tensor.zeros, tensor.add, ...);
-- every tensor has the matching methods (t:sum{axis = 1}) and operators.
local M = require 'chainer.tensor.core'
-- each file adds functions to M and methods to M.methods
for _, family in ipairs({ 'creation', 'views', 'print', 'elementwise', 'reduce', 'linalg', 'join', 'index',
  'sort', 'random', 'strings', 'io' }) do
  require('chainer.tensor.' .. family)
end
return M
