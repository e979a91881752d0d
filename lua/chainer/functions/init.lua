-- chainer.functions (F): differentiable functions on Variables.
--
-- Each family index functions/<family>/init.lua returns a table of its
-- user functions (see functions/_family.lua); they are all copied into F.
-- Adding a function = one file + one line in its family's list.

-- The autograd core and chainer.functions refer to each other (Variable's
-- operators are FunctionNodes); loading `chainer` first fixes the order.
require 'chainer'

local F = {}

local families = {
  'activation', 'array', 'connection', 'evaluation', 'loss', 'math', 'noise', 'normalization',
  'pooling', 'rnn', 'util',
}

for _, family in ipairs(families) do
  for k, v in pairs(require('chainer.functions.' .. family)) do F[k] = v end
end

return F
